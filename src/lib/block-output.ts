import { write, writeSync } from "node:fs";

/** How long a write that found the descriptor busy (a full pipe) waits before it tries again. */
const busyRetryMs = 10;
/** At exit, how long a busy descriptor may take no byte before what is left is dropped. */
const exitPatienceMs = 2000;
/** The most one write takes of what is held (a backlog is written in pieces of this size). */
const defaultLargestWrite = 1024 * 1024;
/** How often, at most, a failed write is told of on standard error. */
const failureNoticeMs = 60_000;

/**
 * Log lines to a file descriptor (the server's standard output) in blocks: the lines of many
 * requests in one write, handed to the thread pool, or what there is every `flushMs`
 * (decision 61). Lines are kept as they come and joined only when a block is written, so a
 * line costs its own length and nothing more; pino's own destination (sonic-boom) measured
 * the whole pending text again for each line it was given, which cost the server 3 µs a line
 * at 4 KiB blocks, twice what pino spends making the line.
 *
 * Blocks are written whole and in order: a short write is followed by its rest, and a
 * descriptor that is busy (`EAGAIN`: a pipe whose reader is behind) is tried again shortly,
 * lines meanwhile gathering behind it and going out at most `largestWrite` at a time. A reader
 * that is gone (`EPIPE`) or a descriptor that is not open ends the output: lines are dropped
 * from then on, as pino drops them on a broken pipe, and the process goes on. Any other failure
 * (a full disk under a file) drops that block alone, said on standard error at most once a
 * minute. `flush(callback)` answers once everything taken so far is written; at exit, when
 * there is no event loop left, `flushSync` writes what is held and every line after it at once.
 */
export class BlockOutput {
  readonly #fd: number;
  readonly #blockBytes: number;
  readonly #largestWrite: number;
  /** The lines held, from `#head` on (those before it are written). */
  #lines: string[] = [];
  #head = 0;
  /** The held lines' length in UTF-16 units: a block's size near enough (log lines are mostly ASCII). */
  #length = 0;
  /** The block handed to the thread pool, until its write answers. */
  #inFlight: Buffer | null = null;
  /** What is left of a block to write before anything else: after a short or a busy write. */
  #unwritten: Buffer | null = null;
  #retry: NodeJS.Timeout | null = null;
  #broken = false;
  /** After `flushSync` (the process is exiting): each line is written as it comes. */
  #exiting = false;
  #lastFailureNotice = Number.NEGATIVE_INFINITY;
  /** Who waits, by `flush(callback)`, for everything held to be written. */
  #waiting: (() => void)[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(
    fd: number,
    options: {
      readonly blockBytes: number;
      readonly flushMs: number;
      readonly largestWrite?: number;
    },
  ) {
    this.#fd = fd;
    this.#blockBytes = options.blockBytes;
    this.#largestWrite = options.largestWrite ?? defaultLargestWrite;
    this.#timer = setInterval(() => {
      this.flush();
    }, options.flushMs);
    this.#timer.unref();
  }

  /** Takes a line (pino's, ending in a newline). */
  write(line: string): boolean {
    if (this.#broken) return true;
    if (this.#exiting) {
      this.#writeAllSync(Buffer.from(line));
      return true;
    }
    this.#lines.push(line);
    this.#length += line.length;
    if (this.#length >= this.#blockBytes && this.#idle()) this.#writeNext();
    return true;
  }

  /**
   * Starts writing what is held, unless a write is under way or waiting; `callback` (pino's
   * `logger.flush`) is called once everything held now and since is written, or dropped.
   */
  flush(callback?: () => void): void {
    if (callback !== undefined) this.#waiting.push(callback);
    if (!this.#broken && this.#idle()) this.#writeNext();
    this.#answerIfDone();
  }

  /** Writes everything held, synchronously, and each line after it as it comes; for the exit. */
  flushSync(): void {
    this.#exiting = true;
    if (this.#broken) return;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = null;
    // A block handed to the thread pool is its to write (or, if the process ends first, lost):
    // writing it again here could write it twice.
    const unwritten = this.#unwritten;
    this.#unwritten = null;
    if (unwritten !== null && !this.#writeAllSync(unwritten)) return;
    for (let block = this.#take(); block !== null; block = this.#take()) {
      if (!this.#writeAllSync(block)) return;
    }
  }

  #idle(): boolean {
    return this.#inFlight === null && this.#retry === null;
  }

  /** The next lines held, up to `#largestWrite`, as one block; null if none are. */
  #take(): Buffer | null {
    const lines = this.#lines;
    if (this.#head === lines.length) return null;
    let end = this.#head;
    let taken = 0;
    while (end < lines.length && (end === this.#head || taken < this.#largestWrite)) {
      taken += (lines[end] as string).length;
      end += 1;
    }
    const block = Buffer.from(
      this.#head === 0 && end === lines.length
        ? lines.join("")
        : lines.slice(this.#head, end).join(""),
    );
    this.#length -= taken;
    if (end === lines.length) {
      this.#lines = [];
      this.#head = 0;
    } else if (end > lines.length / 2) {
      this.#lines = lines.slice(end);
      this.#head = 0;
    } else {
      this.#head = end;
    }
    return block;
  }

  #writeNext(): void {
    const block = this.#unwritten ?? this.#take();
    this.#unwritten = null;
    if (block === null) {
      this.#answerIfDone();
      return;
    }
    this.#inFlight = block;
    write(this.#fd, block, 0, block.length, null, (error, written) => {
      this.#inFlight = null;
      if (this.#exiting) return;
      if (error !== null) {
        if (error.code === "EAGAIN") {
          this.#unwritten = block;
          this.#retry = setTimeout(() => {
            this.#retry = null;
            this.#writeNext();
          }, busyRetryMs);
          this.#retry.unref();
          return;
        }
        this.#failed(error);
        if (this.#broken) return;
      } else if (written < block.length) {
        this.#unwritten = block.subarray(written);
      }
      if (this.#unwritten !== null || this.#length >= this.#blockBytes || this.#waiting.length > 0)
        this.#writeNext();
    });
  }

  /**
   * Writes `block` whole, waiting out a busy descriptor while it takes bytes, up to
   * `exitPatienceMs` without one; false if it could not.
   */
  #writeAllSync(block: Buffer): boolean {
    let offset = 0;
    let giveUpAt = Number.POSITIVE_INFINITY;
    while (offset < block.length) {
      try {
        offset += writeSync(this.#fd, block, offset, block.length - offset);
        giveUpAt = Number.POSITIVE_INFINITY;
      } catch (error) {
        const failure = error as NodeJS.ErrnoException;
        if (failure.code !== "EAGAIN") {
          this.#failed(failure);
          return !this.#broken;
        }
        if (giveUpAt === Number.POSITIVE_INFINITY) giveUpAt = Date.now() + exitPatienceMs;
        if (Date.now() >= giveUpAt) {
          // Only the exit writes this way: lines logged after it would each wait as long.
          this.#broken = true;
          return false;
        }
        Atomics.wait(pause, 0, 0, 1);
      }
    }
    return true;
  }

  /** A write that failed: the output ends if its reader is gone, else that block is dropped. */
  #failed(error: NodeJS.ErrnoException): void {
    if (error.code === "EPIPE" || error.code === "EBADF") {
      this.#broken = true;
      this.#lines = [];
      this.#head = 0;
      this.#length = 0;
      this.#unwritten = null;
      clearInterval(this.#timer);
      this.#answerIfDone();
      return;
    }
    const now = Date.now();
    if (now - this.#lastFailureNotice >= failureNoticeMs) {
      this.#lastFailureNotice = now;
      process.stderr.write(
        `svc: writing the log to standard output failed (${error.code ?? error.message}); ` +
          "a block of lines was dropped\n",
      );
    }
  }

  /** Calls those waiting for the output to be written, once nothing is held or under way. */
  #answerIfDone(): void {
    if (this.#waiting.length === 0) return;
    const done =
      this.#broken ||
      (this.#idle() && this.#unwritten === null && this.#head === this.#lines.length);
    if (!done) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const callback of waiting) callback();
  }
}

/** What `Atomics.wait` sleeps on: nothing ever wakes it before its timeout. */
const pause = new Int32Array(new SharedArrayBuffer(4));
