/** The longest gap between calls that counts in their mean (ms): calls after it are idle ones. */
const quietGapMs = 1000;

/** A call waiting for its batch. */
interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Gathers the calls made while the previous batch runs (or, when none runs, in the current
 * event-loop turn) and runs them as one batch: one transaction and a few multi-row statements
 * for many publishes or many delivery results, instead of a transaction each. Each caller's
 * promise settles with its own output once the batch has committed, or with the batch's
 * error: the work of a batch commits together or not at all.
 *
 * One batch runs at a time; calls made meanwhile form the next one. Under load batches therefore
 * grow to what arrives during one commit, and when idle a call waits only for the end of the turn
 * (with `gatherMs`, for the turns that bring more, below). With `lingerMs` (decision 65), a batch
 * waits up to that long more while calls arrive fast enough that another is expected meanwhile (the
 * mean gap between calls, `gapMs`, at most `lingerMs`): under load a commit's fixed cost (the
 * statement's start, the WAL or file flush, the transaction) is then shared by more calls. The wait
 * ends early when `maxBatch` calls have come, or when none has come for twice the mean gap (at
 * least 1 ms) since it began: the callers that could call may all be waiting, as a worker's slots
 * wait for their results.
 * The mean moves a tenth of the way to each gap, so a lone call after a quiet moment (a gap of
 * 10 × `lingerMs` or more) never waits.
 *
 * With `gatherMs` (decision 68), a batch that does not linger gathers first: it lets the
 * event loop turn while each turn brings new calls, for up to `gatherMs`, and runs at the
 * first turn that brings none. Calls whose requests were already read, or are read meanwhile,
 * join it; no timer waits for calls not yet sent. For SQLite, whose statements run on the
 * main thread, that is most of what a linger saves, without its wait.
 */
export class Batcher<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #maxBatch: number;
  readonly #lingerMs: number;
  readonly #gatherMs: number;
  #queued: Pending<I, O>[] = [];
  #running: Promise<void> | null = null;
  /** When the last call came (`performance.now()`), and the mean gap between calls (ms). */
  #lastCall = Number.NEGATIVE_INFINITY;
  #gapMs = quietGapMs;
  /** Ends the linger early: set while a batch lingers. */
  #stopLingering: (() => void) | null = null;

  /** `run` returns one output per item, in the items' order. */
  constructor(
    run: (items: readonly I[]) => Promise<readonly O[]>,
    options: {
      readonly maxBatch: number;
      readonly lingerMs?: number;
      /** 0 (the default): no gathering. */
      readonly gatherMs?: number;
    },
  ) {
    this.#run = run;
    this.#maxBatch = options.maxBatch;
    this.#lingerMs = options.lingerMs ?? 0;
    this.#gatherMs = options.gatherMs ?? 0;
  }

  add(item: I): Promise<O> {
    const now = performance.now();
    this.#gapMs += (Math.min(now - this.#lastCall, quietGapMs) - this.#gapMs) / 10;
    this.#lastCall = now;
    return new Promise<O>((resolve, reject) => {
      this.#queued.push({ item, resolve, reject });
      this.#running ??= new Promise<void>((start) => setImmediate(start)).then(() => this.#drain());
      if (this.#queued.length >= this.#maxBatch) this.#stopLingering?.();
    });
  }

  /** Settles once every call made so far has settled. */
  async idle(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /** Whether calls come fast enough for another in `lingerMs`, and the batch has room. */
  #worthLingering(): boolean {
    return (
      this.#lingerMs > 0 && this.#gapMs <= this.#lingerMs && this.#queued.length < this.#maxBatch
    );
  }

  /**
   * Waits `lingerMs`, or until `maxBatch` calls are queued, or until no call has come for
   * twice the mean gap (at least 1 ms, a timer's least) since the wait began.
   */
  #linger(): Promise<void> {
    return new Promise<void>((done) => {
      const startedAt = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const stop = (): void => {
        clearTimeout(timer);
        this.#stopLingering = null;
        done();
      };
      const check = (): void => {
        const now = performance.now();
        const quietMs = Math.max(1, 2 * this.#gapMs);
        const lastCall = Math.max(this.#lastCall, startedAt);
        const left = Math.min(startedAt + this.#lingerMs, lastCall + quietMs) - now;
        if (left <= 0) stop();
        else timer = setTimeout(check, left);
      };
      this.#stopLingering = stop;
      check();
    });
  }

  /**
   * Lets the event loop turn while each turn brings calls, up to `gatherMs` or `maxBatch`
   * calls.
   */
  async #gather(): Promise<void> {
    if (!(this.#gatherMs > 0)) return;
    const startedAt = performance.now();
    for (;;) {
      const before = this.#queued.length;
      if (before >= this.#maxBatch) return;
      await new Promise<void>((turn) => setImmediate(turn));
      if (this.#queued.length === before || performance.now() - startedAt >= this.#gatherMs) {
        return;
      }
    }
  }

  async #drain(): Promise<void> {
    while (this.#queued.length > 0) {
      await (this.#worthLingering() ? this.#linger() : this.#gather());
      const batch = this.#queued.splice(0, this.#maxBatch);
      try {
        const outputs = await this.#run(batch.map((pending) => pending.item));
        batch.forEach((pending, index) => {
          pending.resolve(outputs[index] as O);
        });
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.#running = null;
  }
}
