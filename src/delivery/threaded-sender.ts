import { Worker } from "node:worker_threads";
import type { SendOutcome, SendRequest, Sender } from "./http-sender.ts";

export interface SenderThreadOptions {
  readonly connectionsPerOrigin: number;
  readonly timeoutMs: number;
}

/** A request as it crosses to the thread: the URL as text, and an id for its answer. */
export interface SendJob extends Omit<SendRequest, "url"> {
  readonly id: number;
  readonly url: string;
}

export interface SendResult {
  readonly id: number;
  readonly outcome: SendOutcome;
}

/**
 * An `HttpSender` in a thread of its own, so that the outgoing side of a delivery (undici,
 * TLS, the socket writes and the response's parsing) runs on another core than the API and the
 * database (decision 20). The main thread still checks the address and signs; the requests
 * made in one turn of its event loop cross in one message, and their outcomes come back the
 * same way.
 *
 * If the thread dies, the requests in it fail (the worker records an internal error and
 * retries them on the schedule) and the next request starts a new thread.
 */
export class ThreadedSender implements Sender {
  readonly #options: SenderThreadOptions;
  readonly #threadModule: URL;
  #thread: Worker | null = null;
  readonly #waiting = new Map<
    number,
    { resolve: (outcome: SendOutcome) => void; reject: (error: Error) => void }
  >();
  #batch: SendJob[] = [];
  #lastId = 0;
  #closed = false;

  /** `threadModule`: tests only, a stand-in for the thread's code (sender-thread.js). */
  constructor(
    options: SenderThreadOptions,
    threadModule = new URL("./sender-thread.js", import.meta.url),
  ) {
    this.#options = options;
    this.#threadModule = threadModule;
  }

  send(message: SendRequest): Promise<SendOutcome> {
    if (this.#closed) return Promise.reject(new Error("the sender is closed"));
    return new Promise((resolve, reject) => {
      const id = ++this.#lastId;
      this.#waiting.set(id, { resolve, reject });
      if (this.#batch.length === 0) {
        setImmediate(() => {
          this.#post();
        });
      }
      const { url, headers, body, timeoutMs, addresses } = message;
      this.#batch.push({ id, url: url.href, headers, body, timeoutMs, addresses });
    });
  }

  #post(): void {
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    const thread = (this.#thread ??= this.#start());
    // The thread holds the process open only while it has requests to answer.
    thread.ref();
    thread.postMessage(batch);
  }

  #start(): Worker {
    const thread = new Worker(this.#threadModule, {
      workerData: this.#options,
    });
    thread.on("message", (results: readonly SendResult[]) => {
      for (const { id, outcome } of results) {
        const waiting = this.#waiting.get(id);
        this.#waiting.delete(id);
        waiting?.resolve(outcome);
      }
      if (this.#waiting.size === 0 && this.#batch.length === 0) thread.unref();
    });
    let failure: Error | null = null;
    thread.on("error", (error: Error) => {
      failure = error;
    });
    thread.on("exit", (code) => {
      if (this.#thread === thread) this.#thread = null;
      const error = new Error(
        `the delivery sender thread stopped (${failure?.message ?? `exit code ${code}`})`,
      );
      for (const [id, waiting] of this.#waiting) {
        this.#waiting.delete(id);
        waiting.reject(error);
      }
    });
    return thread;
  }

  /** Waits for the requests under way to be answered, then ends the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#post();
    const thread = this.#thread;
    if (thread === null) return;
    thread.ref();
    const exited = new Promise((resolve) => thread.once("exit", resolve));
    thread.postMessage("close");
    await exited;
  }
}
