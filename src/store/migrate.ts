import { readdir, readFile } from "node:fs/promises";
import type { Database } from "./database.ts";

/** `migrations/<dialect>/NNNNNN_name.sql`, relative to the package root (from dist/src/store). */
const migrationsRoot = new URL("../../../migrations/", import.meta.url);

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

async function readMigrations(dialect: Database["dialect"]): Promise<Migration[]> {
  const folder = new URL(`${dialect}/`, migrationsRoot);
  const files = (await readdir(folder)).filter((file) => file.endsWith(".sql")).sort();
  const migrations = await Promise.all(
    files.map(async (file) => {
      const match = /^(\d{6})_(.+)\.sql$/.exec(file);
      if (match?.[1] === undefined || match[2] === undefined) {
        throw new Error(`Migration file ${file} is not named NNNNNN_name.sql`);
      }
      return {
        version: Number(match[1]),
        name: match[2],
        sql: await readFile(new URL(file, folder), "utf8"),
      };
    }),
  );
  // A version is recorded as applied by its number alone, so a second file of the same number
  // (two branches that each took the next one) would be skipped silently. Refuse it instead.
  const seen = new Set<number>();
  for (const migration of migrations) {
    if (seen.has(migration.version)) {
      throw new Error(
        `Two migrations in migrations/${dialect} are numbered ${migration.version}: renumber the newer one after the last`,
      );
    }
    seen.add(migration.version);
  }
  return migrations;
}

/** The versions of the migrations this build has for `dialect`, in order. */
export async function knownMigrationVersions(dialect: Database["dialect"]): Promise<number[]> {
  return (await readMigrations(dialect)).map((migration) => migration.version);
}

/**
 * Applies every migration newer than the database, each in its own transaction together with
 * its row in `schema_migrations`, under the database's migration lock (several processes may
 * start at once). Migrations are append-only: a landed file is never edited.
 * Returns the versions applied.
 */
export async function migrate(
  db: Database,
  options: {
    /** The last version to apply (the tests of a migration over rows of the schema before it). */
    readonly upTo?: number;
  } = {},
): Promise<number[]> {
  return db.withMigrationLock(() => applyMigrations(db, options.upTo ?? Infinity));
}

async function applyMigrations(db: Database, upTo: number): Promise<number[]> {
  await db.executeScript(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
  );
  const applied: number[] = [];
  for (const migration of await readMigrations(db.dialect)) {
    if (migration.version > upTo) break;
    const done = await db.transaction(async (tx) => {
      // Checked inside the transaction: another process may have applied it meanwhile.
      const rows = await tx.query("SELECT 1 FROM schema_migrations WHERE version = $1", [
        migration.version,
      ]);
      if (rows.length > 0) return false;
      for (const statement of splitStatements(migration.sql)) await tx.execute(statement);
      await tx.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
        [migration.version, migration.name, Date.now()],
      );
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

/**
 * Splits a migration into statements at the semicolons that end a line, outside a
 * dollar-quoted body (`$$ … $$`, a function's). Migrations are written one statement per
 * `;`-terminated block, so no parser is needed. Lines of comments outside bodies are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let lines: string[] = [];
  let quoted = false;
  for (const line of sql.split("\n")) {
    if (!quoted && line.trimStart().startsWith("--")) continue;
    lines.push(line);
    if ((line.split("$$").length - 1) % 2 === 1) quoted = !quoted;
    if (!quoted && /;\s*$/.test(line)) {
      statements.push(lines.join("\n").replace(/;\s*$/, ""));
      lines = [];
    }
  }
  statements.push(lines.join("\n"));
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "");
}
