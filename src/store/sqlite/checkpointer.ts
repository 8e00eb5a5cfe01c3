import { Worker } from "node:worker_threads";

/** How often the background thread checkpoints the WAL. */
const intervalMs = 250;

/**
 * The thread's code: its own connection to the database, a PASSIVE checkpoint every
 * `intervalMs` (it copies what it can and never blocks the writer), a last one on "stop".
 * Written as a string so the thread needs no module of its own on disk.
 */
const threadSource = `
const { DatabaseSync } = require("node:sqlite");
const { parentPort, workerData } = require("node:worker_threads");
const db = new DatabaseSync(workerData.path);
db.exec("PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;");
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
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

  constructor(path: string, onError: (message: string) => void) {
    this.#worker = new Worker(threadSource, { eval: true, workerData: { path, intervalMs } });
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
