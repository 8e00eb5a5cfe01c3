import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { SqlExecutor } from "../../src/store/database.ts";
import { SqliteDatabase } from "../../src/store/sqlite/sqlite-database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { eventually } from "../support/eventually.ts";
import { tempDir } from "../support/temp.ts";

describe("SqliteDatabase", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let db: SqliteDatabase;

  before(async () => {
    dir = await tempDir();
    db = new SqliteDatabase(join(dir.path, "test.db"));
    await db.executeScript("CREATE TABLE items (name TEXT PRIMARY KEY, flag INTEGER)");
  });
  after(async () => {
    await db.close();
    await dir.cleanup();
  });

  it("creates a new database 0600, and SQLite gives its -wal and -shm that mode, whatever the umask", async () => {
    const path = join(dir.path, "umask.db");
    const umask = process.umask(0);
    try {
      const created = new SqliteDatabase(path);
      try {
        await created.executeScript("CREATE TABLE t (x INTEGER)");
        for (const file of [path, `${path}-wal`, `${path}-shm`]) {
          assert.equal((await stat(file)).mode & 0o777, 0o600, file);
        }
      } finally {
        await created.close();
      }
    } finally {
      process.umask(umask);
    }
  });

  it("binds $n placeholders by number, in any order, and booleans as 0/1", async () => {
    await db.execute("INSERT INTO items (flag, name) VALUES ($2, $1)", ["a", true]);
    const rows = await db.query("SELECT name, flag FROM items WHERE name = $1", ["a"]);
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      [{ name: "a", flag: 1 }],
    );
  });

  it("rolls a failed transaction back whole", async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.execute("INSERT INTO items (name, flag) VALUES ($1, $2)", ["b", 0]);
        await tx.execute("INSERT INTO items (name, flag) VALUES ($1, $2)", ["a", 0]); // duplicate
      }),
    );
    assert.deepEqual(await db.query("SELECT name FROM items WHERE name = $1", ["b"]), []);
  });

  it("keeps statements issued outside a transaction out of it while it is open", async () => {
    let outsideDone = false;
    let outside: Promise<unknown> = Promise.resolve();
    const transaction = db.transaction(async (tx) => {
      await tx.execute("INSERT INTO items (name, flag) VALUES ($1, $2)", ["c", 0]);
      // While this transaction waits, another caller writes outside it…
      outside = db
        .execute("INSERT INTO items (name, flag) VALUES ($1, $2)", ["d", 0])
        .then(() => (outsideDone = true));
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(outsideDone, false, "the outside write waits for the transaction");
      throw new Error("roll back");
    });
    await assert.rejects(transaction, /roll back/);
    // …and so survives the rollback, which undid only the transaction's own write. (Awaited:
    // its answer waits for an fsync, which a busy machine can take more than a few ms for.)
    await outside;
    assert.equal(outsideDone, true);
    const names = (await db.query<{ name: string }>("SELECT name FROM items ORDER BY name")).map(
      (row) => row.name,
    );
    assert.deepEqual(names, ["a", "d"]);
  });

  it("runs queued transactions one after another", async () => {
    const order: string[] = [];
    await Promise.all(
      ["x", "y", "z"].map((name) =>
        db.transaction(async (tx) => {
          order.push(`begin ${name}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
          await tx.execute("INSERT INTO items (name, flag) VALUES ($1, $2)", [name, 0]);
          order.push(`end ${name}`);
        }),
      ),
    );
    assert.deepEqual(order, ["begin x", "end x", "begin y", "end y", "begin z", "end z"]);
  });

  it("never lets a statement issued just before a transaction join it", async () => {
    const insert = "INSERT INTO items (name, flag) VALUES ($1, $2)";
    const outside = db.execute(insert, ["before-tx", 0]);
    const failing = db.transaction(async (tx) => {
      await tx.execute(insert, ["inside-tx", 0]);
      throw new Error("roll back");
    });
    assert.equal(await outside, 1);
    await assert.rejects(failing, /roll back/);
    const names = (
      await db.query<{ name: string }>("SELECT name FROM items WHERE name LIKE '%-tx'")
    ).map((row) => row.name);
    assert.deepEqual(names, ["before-tx"], "the statement reported done stays done");
  });

  /**
   * Transactions requested at once (so run as one batch), each inserting `<prefix><n>` and
   * failing after it where `fails` says: how each ended, and the names that were committed.
   */
  const batchOf = async (
    prefix: string,
    fails: readonly boolean[],
  ): Promise<{ statuses: string[]; committed: string[] }> => {
    const insert = "INSERT INTO items (name, flag) VALUES ($1, $2)";
    const outcomes = await Promise.allSettled(
      fails.map((fail, index) =>
        db.transaction(async (tx) => {
          await tx.execute(insert, [`${prefix}${index + 1}`, 0]);
          if (fail) throw new Error(`${prefix}${index + 1} fails`);
        }),
      ),
    );
    const committed = (
      await db.query<{ name: string }>("SELECT name FROM items WHERE name LIKE $1 ORDER BY name", [
        `${prefix}%`,
      ])
    ).map((row) => row.name);
    return { statuses: outcomes.map((outcome) => outcome.status), committed };
  };

  it("commits concurrent transactions together, failing only the one that fails", async () => {
    assert.deepEqual(await batchOf("g", [false, true, false]), {
      statuses: ["fulfilled", "rejected", "fulfilled"],
      committed: ["g1", "g3"],
    });
  });

  it("fails a batch's first transaction alone, the ones after it committed", async () => {
    assert.deepEqual(await batchOf("h", [true, false, true, false]), {
      statuses: ["rejected", "fulfilled", "rejected", "fulfilled"],
      committed: ["h2", "h4"],
    });
  });

  it("keeps the undo copies of a batch of bounded transactions in memory, and of any other in SQLite's files", async () => {
    const tempStore = async (tx: SqlExecutor): Promise<number> => {
      const [row] = await tx.query<{ temp_store: number }>("PRAGMA temp_store");
      return Number(row?.temp_store);
    };
    const bounded = await db.transaction(tempStore, { bounded: true });
    const alone = await db.transaction(tempStore);
    // Asked for in the same turn: one batch.
    const [mixedBounded, mixedOther] = await Promise.all([
      db.transaction(tempStore, { bounded: true }),
      db.transaction(tempStore),
    ]);
    // 2 is MEMORY, 0 SQLite's default (files).
    assert.deepEqual([bounded, alone, mixedBounded, mixedOther], [2, 0, 0, 0]);
    assert.equal(await tempStore(db), 0, "reads between batches sort in SQLite's files");
  });

  it("applies migrations once, however often it is asked", async () => {
    const fresh = new SqliteDatabase(join(dir.path, "migrated.db"));
    try {
      const first = await migrate(fresh);
      assert.ok(first.length >= 1);
      assert.deepEqual(await migrate(fresh), []);
    } finally {
      await fresh.close();
    }
  });

  describe("WAL checkpoints", () => {
    /** Writes about 1 MiB: well under the 1,000 pages (~4 MiB) of SQLite's automatic checkpoint. */
    const fill = async (target: SqliteDatabase): Promise<void> => {
      await target.executeScript("CREATE TABLE blobs (n INTEGER PRIMARY KEY, data TEXT)");
      await target.transaction(async (tx) => {
        for (let n = 0; n < 64; n += 1) {
          await tx.execute("INSERT INTO blobs (n, data) VALUES ($1, $2)", [n, "x".repeat(16_384)]);
        }
      });
    };
    const sizeOf = async (path: string): Promise<number> => (await stat(path)).size;

    it("background: a thread copies the WAL into the database file soon, off the event loop", async () => {
      const path = join(dir.path, "background.db");
      const background = new SqliteDatabase(path, { checkpoints: "background" });
      try {
        await fill(background);
        assert.ok((await sizeOf(`${path}-wal`)) > 1_000_000, "the change is in the WAL");
        const deadline = Date.now() + 5000;
        while ((await sizeOf(path)) < 1_000_000 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.ok((await sizeOf(path)) > 1_000_000, "the WAL was checkpointed into the file");
        // And it is all there, read back through the connection that wrote it.
        const [row] = await background.query<{ count: number }>(
          "SELECT COUNT(*) AS count FROM blobs",
        );
        assert.equal(row?.count, 64);
      } finally {
        await background.close(); // ends the thread: the test process could not exit otherwise
      }
    });

    it("background: the WAL stays near its size limit under sustained writes, and within it after", async () => {
      const path = join(dir.path, "bounded.db");
      const limit = 2 * 1024 * 1024;
      const bounded = new SqliteDatabase(path, { checkpoints: "background", walSizeLimit: limit });
      try {
        await bounded.executeScript("CREATE TABLE log (n INTEGER PRIMARY KEY, data TEXT)");
        // About 40 MiB in small transactions, one after another: the writer hardly pauses.
        // Without the limit the WAL holds all of it (a PASSIVE checkpoint never catches up).
        let largest = 0;
        const started = Date.now();
        for (let n = 0; n < 2500; n += 1) {
          await bounded.transaction(async (tx) => {
            await tx.execute("INSERT INTO log (n, data) VALUES ($1, $2)", [n, "y".repeat(16_384)]);
          });
          if (n % 50 === 0) largest = Math.max(largest, await sizeOf(`${path}-wal`));
        }
        const seconds = (Date.now() - started) / 1000;
        assert.ok(
          largest < limit * 4,
          `the WAL reached ${largest} bytes against a limit of ${limit} (${seconds} s of writes)`,
        );
        console.log(`bounded WAL: at most ${largest} bytes over ${seconds} s of writes`);
        await eventually(async () => ((await sizeOf(`${path}-wal`)) <= limit ? true : undefined), {
          what: "the WAL back within its limit once the writes paused",
        });
      } finally {
        await bounded.close();
      }
    });

    it("automatic: nothing is checkpointed before SQLite's threshold", async () => {
      const path = join(dir.path, "automatic.db");
      const automatic = new SqliteDatabase(path);
      try {
        await fill(automatic);
        await new Promise((resolve) => setTimeout(resolve, 600));
        assert.ok((await sizeOf(path)) < 1_000_000, "still only in the WAL");
      } finally {
        await automatic.close();
      }
    });
  });

  describe("durability: nobody is answered before the fsync that covers what they wrote or read", () => {
    /** An fsync the test completes by hand; `count` says how many were started. */
    const gatedSync = () => {
      const pending: (() => void)[] = [];
      return {
        syncWal: () =>
          new Promise<void>((resolve) => {
            pending.push(resolve);
          }),
        count: () => pending.length,
        finishAll: () => {
          for (const finish of pending.splice(0)) finish();
        },
      };
    };
    /** Whether `promise` has settled after the current turns have run. */
    const settled = async (promise: Promise<unknown>): Promise<boolean> => {
      let done = false;
      void promise.then(
        () => (done = true),
        () => (done = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      return done;
    };

    it("a write outside a transaction, and a transaction, wait for their fsync; reads do not", async () => {
      const sync = gatedSync();
      const gated = new SqliteDatabase(join(dir.path, "gated.db"), { syncWal: sync.syncWal });
      try {
        const created = gated.executeScript("CREATE TABLE t (n INTEGER PRIMARY KEY)");
        assert.equal(await settled(created), false, "the script waits for the disk");
        sync.finishAll();
        await created;

        const inserted = gated.execute("INSERT INTO t (n) VALUES ($1)", [1]);
        assert.equal(await settled(inserted), false, "a write waits for the disk");
        assert.equal(sync.count(), 1);
        // A read is answered at once, and so is a write that changed nothing.
        assert.equal((await gated.query("SELECT n FROM t")).length, 1);
        assert.equal(await gated.execute("DELETE FROM t WHERE n = $1", [99]), 0);
        sync.finishAll();
        assert.equal(await inserted, 1);

        const tx = gated.transaction((t) => t.execute("INSERT INTO t (n) VALUES ($1)", [2]));
        assert.equal(await settled(tx), false, "a transaction waits for the disk");
        sync.finishAll();
        assert.equal(await tx, 1);
      } finally {
        sync.finishAll();
        await gated.close();
      }
    });

    it("a transaction that need not be durable waits only for what it could read", async () => {
      const sync = gatedSync();
      const gated = new SqliteDatabase(join(dir.path, "claims.db"), { syncWal: sync.syncWal });
      try {
        const created = gated.executeScript("CREATE TABLE t (n INTEGER PRIMARY KEY)");
        await settled(created);
        sync.finishAll();
        await created;

        // Everything before it is durable: answered without an fsync of its own.
        const started = sync.count();
        const claim = gated.transaction((t) => t.execute("UPDATE t SET n = n + 1"), {
          durable: false,
        });
        assert.equal(await settled(claim), true);
        assert.equal(sync.count(), started, "no fsync was waited for");

        // A write not yet durable: a later claim that could read it waits for its fsync.
        const write = gated.execute("INSERT INTO t (n) VALUES ($1)", [5]);
        await settled(write);
        const reader = gated.transaction((t) => t.query("SELECT n FROM t"), { durable: false });
        assert.equal(await settled(reader), false, "it could have read the write: it waits");
        sync.finishAll();
        await settled(reader);
        sync.finishAll();
        assert.deepEqual(
          (await reader).map((row) => ({ ...row })),
          [{ n: 5 }],
        );
        await write;
      } finally {
        sync.finishAll();
        await gated.close();
      }
    });
  });
});
