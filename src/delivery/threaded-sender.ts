import { Worker } from "node:worker_threads";
import type { HttpSenderOptions, SendOutcome, SendRequest, Sender } from "./http-sender.ts";

export type SenderThreadOptions = HttpSenderOptions;

/** A request as it crosses to the thread: the URL as text, and an id for its answer. */
export interface SendJob extends Omit<SendRequest, "url"> {
  readonly id: number;
  readonly url: string;
}

export interface SendResult {
  readonly id: number;
  readonly outcome: SendOutcome;
}

interface Waiting {
  readonly resolve: (outcome: SendOutcome) => void;
  readonly reject: (error: Error) => void;
}

/** A running thread and the requests posted to it that it has not answered yet. */
interface SenderThread {
  readonly worker: Worker;
  readonly holding: Map<number, Waiting>;
  /** Asked to end because it was idle (not a failure); resolves when it has ended. */
  retired: Promise<void> | null;
}

/**
 * How long a thread with nothing to send is kept: the agent's keep-alive (30 s), after which
 * its connections have closed anyway. Ending the thread gives its whole heap back to the
 * system (decision 25); the next request starts another in a few tens of milliseconds.
 */
export const defaultIdleThreadMs = 30_000;

/**
 * An `HttpSender` in a thread of its own, so that the outgoing side of a delivery (undici,
 * TLS, the socket writes and the response's parsing) runs on another core than the API and the
 * database (decision 20). The main thread still checks the address and signs; the requests
 * made in one turn of its event loop cross in one message, and their outcomes come back the
 * same way.
 *
 * If the thread dies, the requests posted to it fail (the worker records an internal error
 * and retries them on the schedule) and the next request starts a new thread. A thread that
 * has had nothing to send for `idleThreadMs` is ended, and `onThreadRetired` hears of it: the
 * delivery side is idle, a moment to give memory back.
 */
export class ThreadedSender implements Sender {
  readonly #options: SenderThreadOptions;
  readonly #threadModule: URL;
  #thread: SenderThread | null = null;
  /** Requests of this turn, not yet posted to a thread. */
  #batch: { readonly job: SendJob; readonly waiting: Waiting }[] = [];
  #lastId = 0;
  #closed = false;
  #idleTimer: NodeJS.Timeout | null = null;
  /** Threads ended for idleness that have not exited yet; `close()` waits for them. */
  readonly #retiring = new Set<Promise<void>>();
  readonly #onThreadStopped: (error: Error) => void;
  readonly #onThreadRetired: () => void;
  readonly #idleThreadMs: number;

  /**
   * `onThreadStopped` hears of a thread that ended before `close()` (for the log),
   * `onThreadRetired` of one ended because it was idle; `threadModule` is for tests only, a
   * stand-in for the thread's code (sender-thread.js).
   */
  constructor(
    options: SenderThreadOptions,
    hooks: {
      onThreadStopped?: (error: Error) => void;
      onThreadRetired?: () => void;
      idleThreadMs?: number;
      threadModule?: URL;
    } = {},
  ) {
    this.#options = options;
    this.#threadModule = hooks.threadModule ?? new URL("./sender-thread.js", import.meta.url);
    this.#onThreadStopped = hooks.onThreadStopped ?? (() => undefined);
    this.#onThreadRetired = hooks.onThreadRetired ?? (() => undefined);
    this.#idleThreadMs = hooks.idleThreadMs ?? defaultIdleThreadMs;
  }

  send(message: SendRequest): Promise<SendOutcome> {
    if (this.#closed) return Promise.reject(new Error("the sender is closed"));
    return new Promise((resolve, reject) => {
      if (this.#batch.length === 0) {
        setImmediate(() => {
          this.#post();
        });
      }
      const { url, headers, body, timeoutMs, addresses } = message;
      const job = {
        id: ++this.#lastId,
        url: url.href,
        headers,
        body,
        timeoutMs,
        addresses,
      };
      this.#batch.push({ job, waiting: { resolve, reject } });
    });
  }

  #post(): void {
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    let thread: SenderThread;
    try {
      thread = this.#thread ??= this.#start();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failure = new Error(`the delivery sender thread could not start (${reason})`);
      for (const { waiting } of batch) waiting.reject(failure);
      return;
    }
    if (this.#idleTimer !== null) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = null;
    }
    // Only what was posted to a thread is failed if that thread dies; a request made after
    // its death goes to the next thread (sent once, answered once).
    for (const { job, waiting } of batch) thread.holding.set(job.id, waiting);
    // The thread holds the process open only while it has requests to answer.
    thread.worker.ref();
    thread.worker.postMessage(batch.map(({ job }) => job));
  }

  #start(): SenderThread {
    const worker = new Worker(this.#threadModule, { workerData: this.#options });
    const thread: SenderThread = { worker, holding: new Map(), retired: null };
    worker.on("message", (results: readonly SendResult[]) => {
      for (const { id, outcome } of results) {
        const waiting = thread.holding.get(id);
        thread.holding.delete(id);
        waiting?.resolve(outcome);
      }
      // Once closing, the thread keeps the process open until it has ended.
      if (thread.holding.size === 0 && !this.#closed) {
        worker.unref();
        this.#retireWhenIdle(thread);
      }
    });
    let failure: Error | null = null;
    worker.on("error", (error: Error) => {
      failure = error;
    });
    worker.on("exit", (code) => {
      if (this.#thread === thread) this.#thread = null;
      const error = new Error(
        `the delivery sender thread stopped (${failure?.message ?? `exit code ${code}`})`,
      );
      for (const waiting of thread.holding.values()) waiting.reject(error);
      thread.holding.clear();
      if (!this.#closed && thread.retired === null) this.#onThreadStopped(error);
    });
    return thread;
  }

  #retireWhenIdle(thread: SenderThread): void {
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = null;
      if (this.#thread !== thread || thread.holding.size > 0 || this.#batch.length > 0) return;
      this.#thread = null;
      const exited = new Promise<void>((resolve) => {
        thread.worker.once("exit", () => {
          resolve();
        });
      });
      thread.retired = exited;
      this.#retiring.add(exited);
      void exited.then(() => {
        this.#retiring.delete(exited);
        if (!this.#closed) this.#onThreadRetired();
      });
      thread.worker.postMessage("close");
    }, this.#idleThreadMs);
    this.#idleTimer.unref();
  }

  /** Waits for the requests under way to be answered, then ends the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer);
    this.#post();
    await Promise.all(this.#retiring);
    const thread = this.#thread;
    if (thread === null) return;
    thread.worker.ref();
    const exited = new Promise((resolve) => thread.worker.once("exit", resolve));
    thread.worker.postMessage("close");
    await exited;
  }
}
