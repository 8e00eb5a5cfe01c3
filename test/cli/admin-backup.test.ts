import assert from "node:assert/strict";
import { lstat, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { newId } from "../../src/crypto/tokens.ts";
import { systemClock, type Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testBackend, testDatabaseEnv, testDatabaseLocation } from "../support/database.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { tempDir } from "../support/temp.ts";

const onSqlite = { skip: testBackend !== "sqlite" ? "SQLite only: PostgreSQL has pg_dump" : false };

function assertStatus(run: CliRun, status: number): void {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

describe("svc admin backup and restore", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let store: Store;
  const published: string[] = [];

  before(async () => {
    dir = await tempDir();
    dataDir = join(dir.path, "data");
    env = { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) };
    store = await openStore(await testDatabaseLocation(dataDir), systemClock);
    await store.credentials.createWorkspace({ id: "ws_backup", name: "Backed up" });
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  const svc = (args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    runCliInMemory(args, { env: { ...env, ...extraEnv } });

  const publish = async (): Promise<void> => {
    const id = newId("key").replace("key_", "evt_");
    await store.queue.publishEvent({
      id,
      workspaceId: "ws_backup",
      type: "job.completed",
      apiVersion: "2026-11-01",
      body: JSON.stringify({ id }),
      createdAt: new Date(),
    });
    published.push(id);
  };

  it(
    "on PostgreSQL, backup and restore say to use pg_dump and pg_restore",
    { skip: testBackend !== "postgres" },
    async () => {
      const backup = await svc(["admin", "backup", "--output", join(dir.path, "pg.db")]);
      assertStatus(backup, 1);
      assert.match(backup.stderr, /pg_dump.*\(sqlite_only\)\n$/);
      const restore = await svc(["admin", "restore", "--input", join(dir.path, "pg.db"), "--yes"]);
      assertStatus(restore, 1);
      assert.match(restore.stderr, /pg_restore/);
      await assert.rejects(stat(join(dir.path, "pg.db")), { code: "ENOENT" });
    },
  );

  it(
    "backs up, while events are published, a consistent copy in a new 0600 file",
    onSqlite,
    async () => {
      const stop = new AbortController();
      const writer = (async () => {
        while (!stop.signal.aborted) await publish();
      })();
      try {
        while (published.length < 20) await new Promise((resolve) => setImmediate(resolve));
        const output = join(dir.path, "during-writes.db");
        const run = await svc(["admin", "backup", "--output", output, "--json"]);
        assertStatus(run, 0);
        const { data } = JSON.parse(run.stdout) as { data: { file: string; bytes: number } };
        assert.equal(data.file, output);
        assert.equal((await stat(output)).mode & 0o777, 0o600);
        assert.equal((await stat(output)).size, data.bytes);
      } finally {
        stop.abort();
        await writer;
      }
      // The copy holds the events published before it, in order, and none after a gap.
      const copy = new DatabaseSync(join(dir.path, "during-writes.db"), { readOnly: true });
      try {
        const ids = (
          copy.prepare("SELECT id FROM events ORDER BY seq").all() as { id: string }[]
        ).map(({ id }) => id);
        assert.ok(ids.length >= 20, `only ${ids.length} events in the copy`);
        assert.deepEqual(ids, published.slice(0, ids.length));
        assert.equal(
          (copy.prepare("PRAGMA integrity_check").get() as { integrity_check: string })
            .integrity_check,
          "ok",
        );
      } finally {
        copy.close();
      }
    },
  );

  it("never overwrites an existing --output", onSqlite, async () => {
    const existing = join(dir.path, "existing.db");
    await writeFile(existing, "keep me");
    const run = await svc(["admin", "backup", "--output", existing]);
    assertStatus(run, 2);
    assert.match(run.stderr, /already exists.*\(output_exists\)\n$/);
    assert.equal(await readFile(existing, "utf8"), "keep me");
  });

  it("requires --output", onSqlite, async () => {
    const run = await svc(["admin", "backup"]);
    assertStatus(run, 2);
    assert.match(run.stderr, /--output <file> is required/);
  });

  it(
    "restores into a fresh data directory a database that opens and has the rows",
    onSqlite,
    async () => {
      const backup = join(dir.path, "for-restore.db");
      assertStatus(await svc(["admin", "backup", "--output", backup]), 0);
      const fresh = join(dir.path, "fresh");
      const run = await svc(["admin", "restore", "--input", backup, "--yes", "--json"], {
        SVC_DATA_DIR: fresh,
      });
      assertStatus(run, 0);
      const restoredPath = join(fresh, "svc.db");
      assert.equal((await stat(restoredPath)).mode & 0o777, 0o600);
      const restored = await openStore(restoredPath, systemClock);
      try {
        assert.equal((await restored.credentials.getWorkspace("ws_backup"))?.name, "Backed up");
        assert.equal(eventCount(restoredPath), published.length);
      } finally {
        await restored.close();
      }
      const listed = await svc(["admin", "workspaces", "list", "--field", "id"], {
        SVC_DATA_DIR: fresh,
      });
      assertStatus(listed, 0);
      assert.equal(listed.stdout, "ws_backup\n");
    },
  );

  it("restores through a symlinked --database into the file it points to", onSqlite, async () => {
    const backup = join(dir.path, "for-link.db");
    assertStatus(await svc(["admin", "backup", "--output", backup]), 0);
    const real = join(dir.path, "linked", "svc.db");
    assertStatus(
      await svc(["admin", "workspaces", "create", "--name", "Before"], {
        SVC_DATA_DIR: join(dir.path, "linked"),
      }),
      0,
    );
    const link = join(dir.path, "link.db");
    await symlink(real, link);
    assertStatus(
      await svc(["admin", "restore", "--database", link, "--input", backup, "--yes"]),
      0,
    );
    assert.ok((await lstat(link)).isSymbolicLink(), "the link is kept");
    assert.equal(eventCount(real), published.length);
  });

  it("refuses to restore while another process has the database open", onSqlite, async () => {
    const backup = join(dir.path, "while-open.db");
    assertStatus(await svc(["admin", "backup", "--output", backup]), 0);
    // `store`, open in this test, stands for the running server.
    const run = await svc(["admin", "restore", "--input", backup, "--yes"]);
    assertStatus(run, 1);
    assert.match(run.stderr, /Stop it, then run the command again\. \(database_in_use\)\n$/);
    assert.equal((await store.credentials.getWorkspace("ws_backup"))?.name, "Backed up");
  });

  it(
    "refuses a file that is not a svc database, or one of other migrations, changing nothing",
    onSqlite,
    async () => {
      const notSqlite = join(dir.path, "not-sqlite.db");
      await writeFile(notSqlite, "hello");
      const plain = join(dir.path, "plain.db");
      const plainDb = new DatabaseSync(plain);
      plainDb.exec("CREATE TABLE t (x)");
      plainDb.close();
      const older = join(dir.path, "older.db");
      assertStatus(await svc(["admin", "backup", "--output", older]), 0);
      const olderDb = new DatabaseSync(older);
      olderDb.exec(
        "DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)",
      );
      olderDb.close();
      const target = join(dir.path, "untouched");
      for (const [input, message] of [
        [notSqlite, /not a SQLite database/],
        [plain, /is not as svc makes it: it has a table t that svc does not create/],
        [older, /has migrations 1, 2, .*; this version of svc has/],
      ] as const) {
        const run = await svc(["admin", "restore", "--input", input, "--yes"], {
          SVC_DATA_DIR: target,
        });
        assertStatus(run, 2);
        assert.match(run.stderr, message);
        assert.match(run.stderr, /\(invalid_backup\)\n$/);
      }
      const listed = await svc(["admin", "workspaces", "list", "--json"], { SVC_DATA_DIR: target });
      assert.deepEqual(JSON.parse(listed.stdout), { ok: true, data: [] });
    },
  );

  it("restore without a terminal needs --yes", onSqlite, async () => {
    const run = await svc(["admin", "restore", "--input", join(dir.path, "for-restore.db")]);
    assertStatus(run, 2);
    assert.match(run.stderr, /Pass --yes.*\(confirmation_required\)\n$/);
  });
});

function eventCount(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
  } finally {
    db.close();
  }
}
