import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, readdir, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { hashToken } from "../../src/crypto/tokens.ts";
import { testBackend } from "../support/database.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { isolatedConfigHome, svcBin } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

const onSqlite = { skip: testBackend !== "sqlite" ? "SQLite only: PostgreSQL has pg_dump" : false };

/** The token a tampered backup's trigger would give every new workspace. */
const plantedToken = "svc_planted_known_token";

/**
 * Tampered copies of a genuine backup, each with what it must be refused for. Schema edits
 * through `writable_schema` keep the rows, as an attacker editing a real backup would.
 */
const tamperings: readonly {
  readonly name: string;
  readonly sql: string;
  readonly refusal: RegExp;
}[] = [
  {
    name: "a trigger that plants a key with a known token in every new workspace",
    sql: `CREATE TRIGGER svc_workspace_keys AFTER INSERT ON workspaces BEGIN
      INSERT INTO api_keys (id, workspace_id, token_hash, scopes, created_at)
      VALUES ('key_planted_' || NEW.id, NEW.id, '${hashToken(plantedToken)}',
        '["webhooks:write","events:write"]', 0);
    END`,
    refusal: /has a trigger svc_workspace_keys that svc does not create/,
  },
  {
    name: "an extra view",
    sql: "CREATE VIEW svc_keys AS SELECT * FROM api_keys",
    refusal: /has a view svc_keys that svc does not create/,
  },
  {
    name: "an extra table",
    sql: "CREATE TABLE svc_extra (x TEXT)",
    refusal: /has a table svc_extra that svc does not create/,
  },
  {
    name: "an extra index",
    sql: "CREATE INDEX svc_workspace_names ON workspaces (name)",
    refusal: /has a index svc_workspace_names that svc does not create/,
  },
  {
    name: "a missing index",
    sql: "DROP INDEX destinations_by_workspace",
    refusal: /lacks the index destinations_by_workspace/,
  },
  {
    name: "a column of another type",
    sql: schemaEdit("settings", "value TEXT NOT NULL", "value BLOB NOT NULL"),
    refusal: /has the column settings\.value as BLOB NOT NULL, where svc makes TEXT NOT NULL/,
  },
  {
    name: "an extra column",
    sql: "ALTER TABLE workspaces ADD COLUMN planted TEXT",
    refusal: /has a column workspaces\.planted that svc does not create/,
  },
  {
    name: "a dropped column",
    sql: "ALTER TABLE api_keys DROP COLUMN last_used_at",
    refusal: /lacks the column api_keys\.last_used_at/,
  },
  {
    name: "a table replaced by a view",
    sql: "DROP TABLE settings; CREATE VIEW settings (name, value, updated_at) AS SELECT 'a', 'b', 0",
    refusal: /has a view settings where svc makes a table/,
  },
  {
    name: "a virtual table",
    sql: "CREATE VIRTUAL TABLE svc_search USING fts5 (body)",
    refusal: /has a virtual table svc_search that svc does not create/,
  },
  {
    name: "a changed CHECK",
    sql: schemaEdit("instance", "CHECK (id = 1)", "CHECK (id > 0)"),
    refusal: /defines the table instance otherwise than svc does/,
  },
  {
    name: "a changed default",
    sql: schemaEdit("workspaces", "name TEXT NOT NULL", "name TEXT NOT NULL DEFAULT 'x'"),
    refusal:
      /has the column workspaces\.name as TEXT NOT NULL DEFAULT 'x', where svc makes TEXT NOT NULL/,
  },
  {
    name: "a migration renamed in schema_migrations",
    sql: "UPDATE schema_migrations SET name = 'planted' WHERE version = 1",
    refusal: /has migrations named otherwise than this version of svc's \(1 planted, 2 /,
  },
  {
    name: "a migration added to schema_migrations",
    sql: "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'planted', 0)",
    refusal: /has migrations 1, 2, .*, 999; this version of svc has/,
  },
];

/** Replaces `from` by `to` in the CREATE statement of `table`, keeping its rows. */
function schemaEdit(table: string, from: string, to: string): string {
  return `PRAGMA writable_schema = ON;
    UPDATE sqlite_schema SET sql = replace(sql, '${from}', '${to.replaceAll("'", "''")}') WHERE name = '${table}';
    PRAGMA writable_schema = OFF;`;
}

function assertStatus(
  run: { status: number | null; stdout: string; stderr: string },
  status: number,
) {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

describe("svc admin restore refuses a backup that is not exactly what svc makes", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let genuine: string;
  /** The database a refused restore must leave as it was. */
  let targetDir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await tempDir();
    targetDir = join(dir.path, "target");
    env = { SVC_DATA_DIR: targetDir };
    assertStatus(await svc(["admin", "workspaces", "create", "--name", "Kept"]), 0);
    genuine = join(dir.path, "genuine.db");
    assertStatus(await svc(["admin", "backup", "--output", genuine]), 0);
  });
  after(async () => {
    await dir.cleanup();
  });

  const svc = (args: readonly string[]): Promise<CliRun> => runCliInMemory(args, { env });

  /** A copy of the genuine backup changed by `sql`. */
  async function tampered(name: string, sql: string): Promise<string> {
    const path = join(dir.path, `${name.replace(/\W+/g, "-")}.db`);
    await copyFile(genuine, path);
    const db = new DatabaseSync(path);
    try {
      db.enableDefensive(false); // So that writable_schema may edit a CREATE statement.
      db.exec(sql);
    } finally {
      db.close();
    }
    return path;
  }

  /** The data directory's files and the database's bytes: a refusal changes neither. */
  async function targetState(): Promise<string> {
    const files = (await readdir(targetDir)).sort().join(",");
    const bytes = createHash("sha256")
      .update(await readFile(join(targetDir, "svc.db")))
      .digest("hex");
    return `${files} ${bytes}`;
  }

  async function assertRefused(input: string, refusal: RegExp, extra: string[] = []) {
    const before = await targetState();
    const run = await svc(["admin", "restore", "--input", input, "--yes", ...extra]);
    assertStatus(run, 2);
    assert.match(run.stderr, refusal);
    assert.match(run.stderr, /nothing was changed\. \(invalid_backup\)\n$/);
    assert.equal(await targetState(), before, "the data directory is as it was");
  }

  for (const { name, sql, refusal } of tamperings) {
    it(
      `refuses ${name}, leaving the database and its directory as they were`,
      onSqlite,
      async () => {
        await assertRefused(await tampered(name, sql), refusal);
      },
    );
  }

  it(
    "leaves no planted key behind: a workspace made after the refusal has none",
    onSqlite,
    async () => {
      const [planting] = tamperings;
      assert.ok(planting !== undefined);
      await assertRefused(await tampered("planting", planting.sql), planting.refusal);
      assertStatus(await svc(["admin", "workspaces", "create", "--name", "After"]), 0);
      const db = new DatabaseSync(join(targetDir, "svc.db"), { readOnly: true });
      try {
        const planted = db
          .prepare("SELECT count(*) AS n FROM api_keys WHERE token_hash = ?")
          .get(hashToken(plantedToken)) as { n: number };
        assert.equal(planted.n, 0);
      } finally {
        db.close();
      }
    },
  );

  it("refuses a file that is not a SQLite database", onSqlite, async () => {
    const path = join(dir.path, "not-sqlite.db");
    await writeFile(path, "SQLite format 3 is what this file is not\n".repeat(200));
    await assertRefused(path, /is not a SQLite database \(file is not a database\)/);
  });

  it("refuses a file over --max-size before reading it, 16GiB by default", onSqlite, async () => {
    // A genuine backup followed by 64 GiB of nothing (a sparse file: no disk is used).
    const huge = join(dir.path, "huge.db");
    await copyFile(genuine, huge);
    await truncate(huge, 64 * 1024 ** 3);
    await assertRefused(
      huge,
      /is 68719476736 bytes, more than the 16GiB a restore reads \(--max-size\)/,
    );
    await assertRefused(genuine, /more than the 1KiB a restore reads \(--max-size\)/, [
      "--max-size",
      "1KiB",
    ]);
  });

  it("stops the check at --timeout, and leaves nothing behind", onSqlite, async () => {
    await assertRefused(genuine, /was not checked within 1 ms \(--timeout\)/, ["--timeout", "1ms"]);
  });

  it("still restores the genuine backup", onSqlite, async () => {
    const run = await svc(["admin", "restore", "--input", genuine, "--yes"]);
    assertStatus(run, 0);
    assert.deepEqual(await readdir(targetDir), ["svc.db"]);
  });

  describe("as the built binary, which must end", () => {
    /** Runs `svc`, killed after 30 s: a restore that hangs fails the test instead. */
    function runBounded(
      args: readonly string[],
    ): Promise<{ status: number | null; stdout: string; stderr: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [svcBin, ...args], {
          env: { PATH: process.env.PATH, XDG_CONFIG_HOME: isolatedConfigHome, ...env },
          stdio: ["ignore", "pipe", "pipe"],
          timeout: 30_000,
          killSignal: "SIGKILL",
        });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
        child.on("error", reject);
        child.on("close", (status, signal) => {
          resolve({
            status,
            stdout,
            stderr: signal === null ? stderr : `${stderr}killed: it hung`,
          });
        });
      });
    }

    it(
      "refuses a recursive view in place of schema_migrations without running it",
      onSqlite,
      async () => {
        const input = await tampered(
          "recursive view",
          `DROP TABLE schema_migrations;
          CREATE VIEW schema_migrations (version, name, applied_at) AS
            WITH RECURSIVE n (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x, 'x', 0 FROM n`,
        );
        const before = await targetState();
        const run = await runBounded(["admin", "restore", "--input", input, "--yes"]);
        assertStatus(run, 2);
        assert.match(run.stderr, /has a view schema_migrations where svc makes a table/);
        assert.equal(await targetState(), before, "no .restoring- file is left");
      },
    );

    it("refuses a FIFO, which would be read without end", onSqlite, async () => {
      const fifo = join(dir.path, "backup.fifo");
      await promisify(execFile)("mkfifo", [fifo]);
      const before = await targetState();
      const run = await runBounded(["admin", "restore", "--input", fifo, "--yes"]);
      assertStatus(run, 2);
      assert.match(run.stderr, /is not a regular file; nothing was changed\. \(invalid_backup\)/);
      assert.equal(await targetState(), before);
    });
  });
});
