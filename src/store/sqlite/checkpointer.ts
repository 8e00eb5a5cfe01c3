import { Worker } from "node:worker_threads";

/** How often the background thread checkpoints the WAL. */
const intervalMs = 250;

/** How often it looks at the WAL's size: its growth past the limit is what one look lets by. */
const sizeCheckMs = 50;

/** The WAL's size past which the thread truncates it (decision 23). */
export const defaultWalSizeLimit = 64 * 1024 * 1024;

/**
 * The longest a truncating checkpoint waits for the writer to pause: it holds the write lock
 * from then until the WAL is truncated, so it must take it only in a lull.
 */
const truncateWaitMs = 50;

/**
 * The thread's code: its own connection to the database, a PASSIVE checkpoint every
 * `intervalMs` (it copies what it can and never blocks the writer), a last one on "stop".
 * Under sustained writes a PASSIVE checkpoint never catches up with the writer, so SQLite
 * never starts the WAL over and it grows without end; once the file is over `walSizeLimit`,
 * the thread runs a TRUNCATE checkpoint, which waits at most `truncateWaitMs` for a pause
 * between the writer's transactions, copies the rest, and cuts the file to nothing. If the
 * writer never pauses that long it tries again at the next tick.
 * Written as a string so the thread needs no module of its own on disk.
 */
const threadSource = `
const { statSync } = require("node:fs");
const { DatabaseSync } = require("node:sqlite");
const { parentPort, workerData } = require("node:worker_threads");
const db = new DatabaseSync(workerData.path);
db.exec("PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;");
const walSize = () => {
  try {
    return statSync(workerData.path + "-wal").size;
  } catch {
    return 0;
  }
};
const report = (error) => {
  parentPort.postMessage({ error: String(error && error.message || error) });
};
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch (error) {
    report(error);
  }
};
const truncateIfOver = () => {
  if (walSize() <= workerData.walSizeLimit) return;
  try {
    db.exec("PRAGMA busy_timeout = " + workerData.truncateWaitMs);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (error) {
    report(error);
  } finally {
    db.exec("PRAGMA busy_timeout = 5000");
  }
};
let ticks = 0;
const timer = setInterval(() => {
  ticks += 1;
  if (ticks % workerData.checkpointEvery === 0) checkpoint();
  truncateIfOver();
}, workerData.sizeCheckMs);
parentPort.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints a SQLite database's WAL from a thread of its own. A checkpoint copies the WAL
 * into the database file and fsyncs both; run by SQLite's automatic checkpoint it happens
 * inside a COMMIT, on the event loop, and stalled the API for up to ~100 ms under load. The
 * server's connection turns the automatic checkpoint off and this thread does it instead.
 */
export class BackgroundCheckpointer {
  readonly #worker: Worker;
  readonly #exited: Promise<void>;

  constructor(path: string, walSizeLimit: number, onError: (message: string) => void) {
    this.#worker = new Worker(threadSource, {
      eval: true,
      workerData: {
        path,
        sizeCheckMs,
        checkpointEvery: intervalMs / sizeCheckMs,
        walSizeLimit,
        truncateWaitMs,
      },
    });
    this.#worker.on("message", (message: { error?: string }) => {
      if (message.error !== undefined) onError(message.error);
    });
    this.#worker.on("error", (error: Error) => {
      onError(error.message);
    });
    this.#exited = new Promise((resolve) => {
      this.#worker.once("exit", () => {
        resolve();
      });
    });
    // The thread must not keep the process alive by itself.
    this.#worker.unref();
  }

  /** A last checkpoint, then the thread ends. */
  async stop(): Promise<void> {
    // Held now, or the process could end while waiting for the thread.
    this.#worker.ref();
    this.#worker.postMessage("stop");
    await this.#exited;
  }
}
