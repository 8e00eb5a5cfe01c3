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
 * One batch runs at a time; calls made meanwhile form the next one. Under load batches
 * therefore grow to what arrives during one commit, and when idle a call waits only for the
 * end of the turn.
 */
export class Batcher<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #maxBatch: number;
  #queued: Pending<I, O>[] = [];
  #running: Promise<void> | null = null;

  /** `run` returns one output per item, in the items' order. */
  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, options: { maxBatch: number }) {
    this.#run = run;
    this.#maxBatch = options.maxBatch;
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queued.push({ item, resolve, reject });
      this.#running ??= new Promise<void>((start) => setImmediate(start)).then(() => this.#drain());
    });
  }

  /** Settles once every call made so far has settled. */
  async idle(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#queued.length > 0) {
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
