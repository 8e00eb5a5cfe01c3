import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { Batcher } from "../../src/store/batcher.ts";

/** One call of the batch function, which the test finishes by hand. */
interface RunningBatch<I> {
  readonly items: readonly I[];
  /** Answers each item with `answer(item)`, in order. */
  finish(): void;
  fail(error: Error): void;
}

/**
 * A batch function that records each batch and settles it only when the test says so, so
 * that the test decides what happens while a batch runs.
 */
function heldBatches<I, O>(answer: (item: I) => O) {
  const batches: RunningBatch<I>[] = [];
  const run = (items: readonly I[]): Promise<readonly O[]> =>
    new Promise<readonly O[]>((resolve, reject) => {
      batches.push({
        items: [...items],
        finish: () => {
          resolve(items.map(answer));
        },
        fail: reject,
      });
    });
  return { batches, run };
}

/** Waits (a few event-loop turns at most) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 50 && !condition(); turn += 1) await nextTurn();
  assert.ok(condition(), `expected ${what}`);
}

/** Whether each promise has settled yet, without waiting for it. */
function tracked<T>(promise: Promise<T>): { settled: () => boolean } {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  return { settled: () => settled };
}

describe("Batcher", () => {
  it("runs the calls made in one event-loop turn as one batch", async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      (items) => {
        batches.push([...items]);
        return Promise.resolve(items.map((item) => item * 10));
      },
      { maxBatch: 100 },
    );
    const first = batcher.add(1);
    const second = batcher.add(2);
    // A call from a microtask of the same turn joins the same batch.
    const third = Promise.resolve().then(() => batcher.add(3));
    assert.deepEqual(await Promise.all([first, second, third]), [10, 20, 30]);
    assert.deepEqual(batches, [[1, 2, 3]]);

    // When idle, a call in a later turn makes a batch of its own.
    assert.equal(await batcher.add(4), 40);
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
  });

  it("gives each caller its own output, in the order of the calls", async () => {
    const batcher = new Batcher<string, string>(
      (items) => Promise.resolve(items.map((item, index) => `${item}@${index}`)),
      { maxBatch: 100 },
    );
    const words = ["c", "a", "b", "a"];
    const outputs = await Promise.all(words.map((word) => batcher.add(word)));
    assert.deepEqual(outputs, ["c@0", "a@1", "b@2", "a@3"]);
  });

  it("gathers the calls made while a batch runs into the next batch, one batch at a time", async () => {
    const { batches, run } = heldBatches((item: number) => item + 100);
    const batcher = new Batcher(run, { maxBatch: 100 });
    const first = batcher.add(1);
    const firstState = tracked(first);
    await until(() => batches.length === 1, "the first batch to start");

    // Made in separate turns, while the first batch runs.
    const second = batcher.add(2);
    await nextTurn();
    const third = batcher.add(3);
    await nextTurn();
    await nextTurn();
    assert.equal(batches.length, 1, "no second batch while the first runs");
    assert.equal(firstState.settled(), false, "a caller waits for its batch to finish");

    batches[0]!.finish();
    assert.equal(await first, 101);
    await until(() => batches.length === 2, "the second batch to start");
    assert.deepEqual(
      batches.map((batch) => batch.items),
      [[1], [2, 3]],
    );
    batches[1]!.finish();
    assert.deepEqual(await Promise.all([second, third]), [102, 103]);
  });

  it("rejects every caller of a failing batch, and only them", async () => {
    const { batches, run } = heldBatches((item: number) => item * 2);
    const batcher = new Batcher(run, { maxBatch: 100 });
    const failing = [batcher.add(1), batcher.add(2)];
    await until(() => batches.length === 1, "the first batch to start");
    const next = batcher.add(3);

    const broken = new Error("the transaction failed");
    batches[0]!.fail(broken);
    for (const call of failing) await assert.rejects(call, (error) => error === broken);

    await until(() => batches.length === 2, "the next batch to start");
    assert.deepEqual(batches[1]!.items, [3]);
    batches[1]!.finish();
    assert.equal(await next, 6, "the batch after the failure succeeds");

    // And the batcher keeps working once idle again.
    const later = batcher.add(4);
    await until(() => batches.length === 3, "a later batch to start");
    batches[2]!.finish();
    assert.equal(await later, 8);
  });

  it("splits a burst into batches of at most maxBatch, keeping each caller's output", async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, string>(
      (items) => {
        batches.push([...items]);
        return Promise.resolve(items.map((item) => `out${item}`));
      },
      { maxBatch: 2 },
    );
    const outputs = await Promise.all([1, 2, 3, 4, 5].map((item) => batcher.add(item)));
    assert.deepEqual(outputs, ["out1", "out2", "out3", "out4", "out5"]);
    assert.deepEqual(batches, [[1, 2], [3, 4], [5]]);
  });

  it("idle() settles only once every call made so far has settled, failed ones included", async () => {
    const { batches, run } = heldBatches((item: number) => item);
    const batcher = new Batcher(run, { maxBatch: 100 });
    await batcher.idle(); // nothing to wait for

    const first = batcher.add(1);
    await until(() => batches.length === 1, "the first batch to start");
    const second = batcher.add(2); // queued while the first batch runs
    const idle = tracked(batcher.idle());

    batches[0]!.finish();
    await first;
    await until(() => batches.length === 2, "the second batch to start");
    await nextTurn();
    assert.equal(idle.settled(), false, "a batch still runs");

    batches[1]!.fail(new Error("broken"));
    await assert.rejects(second, /broken/);
    await until(() => idle.settled(), "idle() to settle after the last batch");

    // A call not yet started (still in its turn) counts too.
    const third = batcher.add(3);
    const idleAgain = tracked(batcher.idle());
    await until(() => batches.length === 3, "the third batch to start");
    assert.equal(idleAgain.settled(), false);
    batches[2]!.finish();
    assert.equal(await third, 3);
    await until(() => idleAgain.settled(), "idle() to settle after the third batch");
  });
});
