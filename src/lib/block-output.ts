import { write, writeSync } from "node:fs";

/** How long a write that found the descriptor busy (a full pipe) waits before it tries again. */
const busyRetryMs = 10;
/** At exit, how long a busy descriptor is tried again, a millisecond apart, before the rest is dropped. */
const exitPatienceMs = 2000;

/**
 * Log lines to a file descriptor (the server's standard output) in blocks: the lines of many
 * requests in one write, handed to the thread pool, or what there is every `flushMs`
 * (decision 61). Lines are kept as they come and joined only when a block is written, so a
 * line costs its own length and nothing more; pino's own destination (sonic-boom) measured
 * the whole pending text again for each line it was given, which cost the server 3 µs a line
 * at 4 KiB blocks, twice what pino spends making the line.
 *
 * A block is written whole, in order: a short write is followed by its rest, and a descriptor
 * that is busy (`EAGAIN`: a pipe whose reader is behind) is tried again shortly, lines meanwhile
 * gathering behind it. Any other failure (the pipe's reader is gone) ends the output: lines are
 * dropped from then on, as pino drops them on a broken pipe, and the process goes on.
 * `flushSync` writes what is held when there is no event loop left (the process's exit): a
 * block already handed to the thread pool is left to it.
 */
export class BlockOutput {
  readonly #fd: number;
  readonly #blockBytes: number;
  #lines: string[] = [];
  /** The lines' length in UTF-16 units: a block's size near enough (log lines are mostly ASCII). */
  #length = 0;
  /** The block handed to the thread pool, until its write answers. */
  #inFlight: Buffer | null = null;
  /** What is left of a block to write before anything else: after a short or a busy write. */
  #unwritten: Buffer | null = null;
  #retry: NodeJS.Timeout | null = null;
  #broken = false;
  readonly #timer: NodeJS.Timeout;

  constructor(fd: number, options: { readonly blockBytes: number; readonly flushMs: number }) {
    this.#fd = fd;
    this.#blockBytes = options.blockBytes;
    this.#timer = setInterval(() => {
      this.flush();
    }, options.flushMs);
    this.#timer.unref();
  }

  /** Takes a line (pino's, ending in a newline). */
  write(line: string): boolean {
    if (this.#broken) return true;
    this.#lines.push(line);
    this.#length += line.length;
    if (this.#length >= this.#blockBytes && this.#idle()) this.#writeNext();
    return true;
  }

  /** Starts writing what is held, unless a write is under way or waiting. */
  flush(): void {
    if (!this.#broken && this.#idle()) this.#writeNext();
  }

  /** Writes everything held, synchronously; for the process's exit. */
  flushSync(): void {
    if (this.#broken) return;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = null;
    const blocks = [this.#unwritten, this.#take()];
    this.#unwritten = null;
    for (const block of blocks) {
      if (block !== null && !this.#writeAllSync(block)) return;
    }
  }

  #idle(): boolean {
    return this.#inFlight === null && this.#retry === null;
  }

  #take(): Buffer | null {
    if (this.#lines.length === 0) return null;
    const block = Buffer.from(this.#lines.join(""));
    this.#lines = [];
    this.#length = 0;
    return block;
  }

  #writeNext(): void {
    const block = this.#unwritten ?? this.#take();
    this.#unwritten = null;
    if (block === null) return;
    this.#inFlight = block;
    write(this.#fd, block, 0, block.length, null, (error, written) => {
      this.#inFlight = null;
      if (error !== null) {
        if (error.code !== "EAGAIN") {
          this.#break();
          return;
        }
        this.#unwritten = block;
        this.#retry = setTimeout(() => {
          this.#retry = null;
          this.#writeNext();
        }, busyRetryMs);
        this.#retry.unref();
        return;
      }
      if (written < block.length) this.#unwritten = block.subarray(written);
      if (this.#unwritten !== null || this.#length >= this.#blockBytes) this.#writeNext();
    });
  }

  /** Writes `block` whole, waiting out a busy descriptor a while; false if it could not. */
  #writeAllSync(block: Buffer): boolean {
    let offset = 0;
    let giveUpAt = Number.POSITIVE_INFINITY;
    while (offset < block.length) {
      try {
        offset += writeSync(this.#fd, block, offset, block.length - offset);
      } catch (error) {
        if (giveUpAt === Number.POSITIVE_INFINITY) giveUpAt = Date.now() + exitPatienceMs;
        if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() >= giveUpAt) {
          this.#break();
          return false;
        }
        Atomics.wait(pause, 0, 0, 1);
      }
    }
    return true;
  }

  #break(): void {
    this.#broken = true;
    this.#lines = [];
    this.#length = 0;
    this.#unwritten = null;
    clearInterval(this.#timer);
  }
}

/** What `Atomics.wait` sleeps on: nothing ever wakes it before its timeout. */
const pause = new Int32Array(new SharedArrayBuffer(4));
