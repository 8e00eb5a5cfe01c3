/**
 * The child process in which `svc admin restore` checks a backup and copies it (decision 38).
 * Run by `restoreSqlite` with `fork`, never imported: it receives `{ input, copy }`, answers
 * `{ refused: null }` once `copy` holds the checked backup, or `{ refused: "<why>" }`.
 *
 * A process, not a thread: SQLite's work cannot be interrupted from JavaScript (a worker
 * stuck in a statement ignores `terminate()`), and a process can be killed at its deadline.
 */
import { DatabaseSync } from "node:sqlite";
import type { SqlExecutor, SqlParam } from "../database.ts";
import { someSealedSecret, type SealedValue } from "../sql/sealed-values.ts";
import { ENCRYPTION_KEY_CHECK, readSetting } from "../sql/settings.ts";
import { migrate } from "../migrate.ts";
import {
  readSchemaShape,
  sameObject,
  schemaDifferences,
  type SchemaShape,
} from "./schema-shape.ts";
import { SqliteDatabase, toSqlitePlaceholders } from "./sqlite-database.ts";
import { sqliteValues, withJsonTables } from "./table-params.ts";

/** What the parent sends. */
export interface RestoreCheckRequest {
  readonly input: string;
  readonly copy: string;
}

/** What the child answers: null when `copy` holds the checked backup, else why it is refused. */
export interface RestoreCheckAnswer {
  readonly refused: string | null;
  /** Of a backup not refused: what tells the key its secrets are sealed with. */
  readonly sealedWith?: SealedWith;
}

/**
 * The check value of the key a backup's secrets are sealed with (null in a backup made before
 * check values), and one of its sealed secrets (null when it has none): what `svc admin
 * restore` compares its key with before it replaces the database.
 */
export interface SealedWith {
  readonly keyCheck: string | null;
  readonly sample: SealedValue | null;
}

/**
 * The most memory SQLite may take in this process; the copy itself needs a few MiB of page
 * cache, so only a hostile file (an index expression building huge values) comes near it.
 */
const heapLimitBytes = 512 * 1024 * 1024;

class Refusal extends Error {}

/** The database this build's migrations make, in memory, and its migrations' rows. */
async function reference(): Promise<{ shape: SchemaShape; migrations: Migrations }> {
  const db = new SqliteDatabase(":memory:");
  try {
    await migrate(db);
    const read = (sql: string, params?: readonly SqlParam[]) => db.query(sql, params);
    return { shape: await readSchemaShape(read), migrations: await migrationsOf(read) };
  } finally {
    await db.close();
  }
}

type Read = (sql: string, params?: readonly SqlParam[]) => Promise<Record<string, unknown>[]>;

interface Migrations {
  readonly versions: string;
  /** Each version with its name. */
  readonly named: string;
}

async function migrationsOf(read: Read): Promise<Migrations> {
  const rows = await read("SELECT version, name FROM schema_migrations ORDER BY version");
  return {
    versions: rows.map((row) => String(row.version)).join(", ") || "none",
    named: rows.map((row) => `${String(row.version)} ${String(row.name)}`).join(", "),
  };
}

/** A connection to a file we do not trust: read-only, defensive, its schema untrusted. */
function openUntrusted(path: string): { db: DatabaseSync; read: Read } {
  const db = new DatabaseSync(path, { readOnly: true });
  db.enableDefensive(true);
  // No function with side effects from a view, trigger or index of the file's own schema.
  db.exec(`PRAGMA trusted_schema = OFF; PRAGMA hard_heap_limit = ${heapLimitBytes}`);
  const read: Read = (sql, params = []) =>
    Promise.resolve(db.prepare(sql).all(...sqliteValues(params)));
  return { db, read };
}

/**
 * The file's schema against the reference, read before anything reads its tables: a view
 * or trigger in it never runs. Its migrations first, when their table is svc's: an older
 * backup is better told by its migrations than by the tables it lacks.
 */
async function checkSchema(read: Read, expected: { shape: SchemaShape; migrations: Migrations }) {
  const shape = await readSchemaShape(read);
  if (sameObject(shape, expected.shape, "schema_migrations")) {
    const migrations = await migrationsOf(read);
    if (migrations.versions !== expected.migrations.versions) {
      throw new Refusal(
        `has migrations ${migrations.versions}; this version of svc has ${expected.migrations.versions}. Restore it with the version of svc that made it`,
      );
    }
    if (migrations.named !== expected.migrations.named) {
      throw new Refusal(
        `has migrations named otherwise than this version of svc's (${migrations.named}; svc has ${expected.migrations.named})`,
      );
    }
  }
  const differences = schemaDifferences(shape, expected.shape);
  if (differences.length > 0) {
    const more = differences.length > 3 ? `, and ${differences.length - 3} more differences` : "";
    throw new Refusal(`is not as svc makes it: it ${differences.slice(0, 3).join("; it ")}${more}`);
  }
}

async function checkAndCopy({ input, copy }: RestoreCheckRequest): Promise<SealedWith> {
  const expected = await reference();
  let source: ReturnType<typeof openUntrusted>;
  try {
    source = openUntrusted(input);
    await source.read("SELECT count(*) FROM sqlite_schema");
  } catch (error) {
    throw new Refusal(`is not a SQLite database (${messageOf(error)})`);
  }
  try {
    await checkSchema(source.read, expected);
    // Only now, the schema known to be svc's, are the tables read: the copy is one
    // consistent snapshot, in one file without a WAL, beside the database.
    source.db.prepare("VACUUM INTO ?").run(copy);
  } finally {
    source.db.close();
  }
  // The copy is what will be used: checked again, in case the file changed meanwhile.
  const copied = openUntrusted(copy);
  try {
    await checkSchema(copied.read, expected);
    const [check] = await copied.read("PRAGMA quick_check");
    if (check?.quick_check !== "ok")
      throw new Refusal(`is damaged (${String(check?.quick_check)})`);
    // Its schema is svc's: its tables are read as svc reads them.
    const tables: SqlExecutor = {
      query: (sql, params) =>
        copied.read(toSqlitePlaceholders(withJsonTables(sql)), params) as never,
      execute: () => Promise.reject(new Error("the copy is only read")),
    };
    return {
      keyCheck: await readSetting(tables, ENCRYPTION_KEY_CHECK),
      sample: await someSealedSecret(tables),
    };
  } finally {
    copied.db.close();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

process.once("message", (request: RestoreCheckRequest) => {
  const answer = (message: RestoreCheckAnswer) => {
    process.send?.(message, () => {
      process.disconnect();
    });
  };
  checkAndCopy(request).then(
    (sealedWith) => {
      answer({ refused: null, sealedWith });
    },
    (error: unknown) => {
      answer({
        refused:
          error instanceof Refusal ? error.message : `could not be read (${messageOf(error)})`,
      });
    },
  );
});
