import assert from "node:assert/strict";
import { createServer } from "node:net";
import pg from "pg";
import { after, before, describe, it } from "node:test";
import { AppError } from "../../src/errors.ts";
import { migrate } from "../../src/store/migrate.ts";
import { deliveriesChannel, PostgresDatabase } from "../../src/store/postgres/postgres-database.ts";
import { adminQuery, testBackend, testDatabaseLocation } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { tempDir } from "../support/temp.ts";

const isUnavailable = (error: unknown): boolean =>
  error instanceof AppError && error.code === "service_unavailable";

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("PostgresDatabase", { skip: testBackend !== "postgres" && "PostgreSQL run only" }, () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let url: string;
  let db: PostgresDatabase;
  const idleErrors: Error[] = [];
  /** Ends every connection to the test database but the administrative one. */
  const terminateConnections = async (): Promise<number> => {
    const name = new URL(url).pathname.slice(1);
    const rows = await adminQuery(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
    );
    return rows.length;
  };

  before(async () => {
    dir = await tempDir();
    url = await testDatabaseLocation(dir.path);
    db = new PostgresDatabase(url, { poolSize: 3, onIdleError: (error) => idleErrors.push(error) });
    await db.executeScript("CREATE TABLE items (name TEXT PRIMARY KEY, n BIGINT)");
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  it("returns the rows changed from execute, and BIGINT as text the mappers convert", async () => {
    assert.equal(await db.execute("INSERT INTO items (name, n) VALUES ($1, $2)", ["a", 1]), 1);
    assert.equal(await db.execute("INSERT INTO items (name, n) VALUES ($1, $2)", ["b", 2]), 1);
    assert.equal(await db.execute("UPDATE items SET n = n + 10"), 2);
    const rows = await db.query("SELECT name, n FROM items ORDER BY name");
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      [
        { name: "a", n: "11" },
        { name: "b", n: "12" },
      ],
    );
  });

  it("rolls a failed transaction back whole and keeps serving", async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.execute("INSERT INTO items (name, n) VALUES ($1, $2)", ["c", 0]);
        await tx.execute("INSERT INTO items (name, n) VALUES ($1, $2)", ["a", 0]); // duplicate
      }),
      { code: "23505" },
    );
    assert.deepEqual(await db.query("SELECT name FROM items WHERE name = $1", ["c"]), []);
    assert.equal((await db.query("SELECT 1 AS one")).length, 1);
  });

  it("keeps a transaction begun with indexPlansOnly off sequential scans, and no other", async () => {
    const setting = async (tx: { query: PostgresDatabase["query"] }): Promise<unknown> =>
      (await tx.query<{ enable_seqscan: string }>("SHOW enable_seqscan"))[0]?.enable_seqscan;
    assert.equal(
      await db.transaction(setting, { indexPlansOnly: true }),
      "off",
      "its plans are made with sequential scans off",
    );
    assert.equal(await db.transaction(setting), "on", "a transaction begun without it");
    assert.equal(await setting(db), "on");
    // A write in it commits as in any other transaction.
    await db.transaction(
      (tx) => tx.execute("INSERT INTO items (name, n) VALUES ($1, $2)", ["planned", 1]),
      { indexPlansOnly: true },
    );
    assert.deepEqual(await db.query("SELECT n FROM items WHERE name = $1", ["planned"]), [
      { n: "1" },
    ]);
  });
  it("migrates once when several processes start at once (advisory lock)", async () => {
    const fresh = await testDatabaseLocation(`${dir.path}/fresh`);
    const databases = Array.from({ length: 4 }, () => new PostgresDatabase(fresh));
    try {
      const applied = await Promise.all(databases.map((each) => migrate(each)));
      const all = applied.flat().sort((a, b) => a - b);
      const versions = (
        await databases[0]!.query<{ version: number }>(
          "SELECT version FROM schema_migrations ORDER BY version",
        )
      ).map((row) => row.version);
      assert.ok(versions.length >= 3);
      assert.deepEqual(all, versions, "each version applied by exactly one of them");
    } finally {
      await Promise.all(databases.map((each) => each.close()));
    }
  });

  it("answers service_unavailable when its connection is terminated, then carries on", async () => {
    await assert.rejects(db.query("SELECT pg_terminate_backend(pg_backend_pid())"), isUnavailable);
    await assert.rejects(
      db.transaction((tx) => tx.query("SELECT pg_terminate_backend(pg_backend_pid())")),
      isUnavailable,
    );
    assert.equal((await db.query("SELECT 1 AS one")).length, 1);
  });

  it("survives idle connections terminated by the server, reporting them", async () => {
    // Fill the pool with idle connections, then end them all from outside.
    await Promise.all([1, 2, 3].map(() => db.query("SELECT pg_sleep(0.05)")));
    const before = idleErrors.length;
    const ended = await terminateConnections();
    assert.ok(ended >= 1);
    // Every one of them: a query handed a connection whose end is not reported yet fails.
    await eventually(
      () => Promise.resolve(idleErrors.length >= before + ended ? true : undefined),
      { what: "the pool to report every lost connection" },
    );
    assert.equal((await db.query("SELECT 1 AS one")).length, 1);
  });

  it("answers service_unavailable when the server cannot be reached", async () => {
    const unreachable = new PostgresDatabase(`postgres://127.0.0.1:${await closedPort()}/none`);
    try {
      await assert.rejects(unreachable.query("SELECT 1"), isUnavailable);
      await assert.rejects(
        unreachable.transaction((tx) => tx.query("SELECT 1")),
        isUnavailable,
      );
    } finally {
      await unreachable.close();
    }
  });

  it("announces queued deliveries with NOTIFY, at most one in flight: a burst folds into two", async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const heard: string[] = [];
    listener.on("notification", (message) => heard.push(message.channel));
    try {
      await listener.query(`LISTEN ${deliveriesChannel}`);
      // Three in one turn: the first is sent, the other two wait for it and become one more.
      db.announceDeliveriesQueued();
      db.announceDeliveriesQueued();
      db.announceDeliveriesQueued();
      await eventually(() => Promise.resolve(heard.length >= 2 ? true : undefined), {
        what: "two notifications",
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(heard, [deliveriesChannel, deliveriesChannel]);
      // Once those are done, the next announcement is sent by itself.
      db.announceDeliveriesQueued();
      await eventually(() => Promise.resolve(heard.length === 3 ? true : undefined), {
        what: "a third notification",
      });
    } finally {
      await listener.end();
    }
  });

  it("reports a NOTIFY that fails instead of throwing: workers find the work by polling", async () => {
    const noticeErrors: Error[] = [];
    const unreachable = new PostgresDatabase(`postgres://127.0.0.1:${await closedPort()}/none`, {
      onNoticeError: (error) => noticeErrors.push(error),
    });
    try {
      unreachable.announceDeliveriesQueued();
      await eventually(() => Promise.resolve(noticeErrors.length === 1 ? true : undefined), {
        what: "the failed NOTIFY to be reported",
      });
    } finally {
      await unreachable.close();
    }
  });
});
