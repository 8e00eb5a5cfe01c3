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

  it("without a linger, gathers the calls of the next turns while each turn brings some", async () => {
    const { batches, run } = heldBatches((item: number) => item);
    // A generous gatherMs, so that a slow machine's turns do not end the gathering.
    const batcher = new Batcher(run, { maxBatch: 100, gatherMs: 60_000 });
    const calls = [batcher.add(1)];
    for (const item of [2, 3]) {
      await nextTurn();
      calls.push(batcher.add(item));
    }
    await until(() => batches.length === 1, "the batch to start at the first turn with no call");
    assert.deepEqual(batches[0]!.items, [1, 2, 3]);
    batches[0]!.finish();
    assert.deepEqual(await Promise.all(calls), [1, 2, 3]);

    // maxBatch ends the gathering: the calls after it form the next batch.
    const small = heldBatches((item: number) => item);
    const capped = new Batcher(small.run, { maxBatch: 3, gatherMs: 60_000 });
    const more = [capped.add(1)];
    await nextTurn();
    more.push(capped.add(2), capped.add(3), capped.add(4));
    await until(() => small.batches.length === 1, "the first batch to start");
    assert.deepEqual(small.batches[0]!.items, [1, 2, 3]);
    small.batches[0]!.finish();
    await until(() => small.batches.length === 2, "the second batch to start");
    assert.deepEqual(small.batches[1]!.items, [4]);
    small.batches[1]!.finish();
    assert.deepEqual(await Promise.all(more), [1, 2, 3, 4]);
  });

  it("gathers for gatherMs at most, however many turns bring calls; none without it", async () => {
    const { batches, run } = heldBatches((item: number) => item);
    const batcher = new Batcher(run, { maxBatch: 1_000_000, gatherMs: 20 });
    // A call every turn, for ever: only gatherMs ends the gathering.
    let stop = false;
    const calls: Promise<number>[] = [];
    const feed = async (): Promise<void> => {
      for (let item = 0; !stop; item += 1) {
        calls.push(batcher.add(item));
        await nextTurn();
      }
    };
    const feeding = feed();
    const giveUpAt = performance.now() + 10_000;
    while (batches.length === 0 && performance.now() < giveUpAt) await nextTurn();
    assert.equal(batches.length, 1, "the batch started while calls still came");
    stop = true;
    await feeding;
    const gathered = batches[0]!;
    assert.ok(gathered.items.length >= 2, "it gathered the calls of later turns");
    gathered.finish();
    if (gathered.items.length < calls.length) {
      await until(() => batches.length === 2, "the calls made meanwhile to form the next batch");
      assert.equal(batches[1]!.items.length, calls.length - gathered.items.length);
      batches[1]!.finish();
    }
    assert.equal((await Promise.all(calls)).length, calls.length);

    // Without gatherMs a batch takes the calls of its own turn alone, as before.
    const plain = heldBatches((item: number) => item);
    const alone = new Batcher(plain.run, { maxBatch: 100 });
    const first = alone.add(1);
    await nextTurn();
    const second = alone.add(2);
    await until(() => plain.batches.length === 1, "the first batch to start");
    assert.deepEqual(plain.batches[0]!.items, [1]);
    plain.batches[0]!.finish();
    await until(() => plain.batches.length === 2, "the second batch to start");
    plain.batches[1]!.finish();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
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

  describe("lingering (lingerMs)", () => {
    it("runs a call after a quiet moment at once", async () => {
      const { batches, run } = heldBatches((item: number) => item);
      const batcher = new Batcher(run, { maxBatch: 100, lingerMs: 60_000 / 100 });
      const call = batcher.add(1);
      await until(() => batches.length === 1, "the batch to start without lingering");
      batches[0]!.finish();
      assert.equal(await call, 1);
    });

    it("under a stream of calls, waits for more until maxBatch have come", async () => {
      const { batches, run } = heldBatches((item: number) => item * 3);
      // One call would not linger (its gap is a quiet one's), thirty in a row do: their
      // mean gap falls far below 900 ms.
      const batcher = new Batcher(run, { maxBatch: 40, lingerMs: 900 });
      const calls = Array.from({ length: 30 }, (_, index) => batcher.add(index));
      for (let turn = 0; turn < 10; turn += 1) await nextTurn();
      assert.equal(batches.length, 0, "the batch lingers for more calls");
      // Calls of later turns join it, and the fortieth ends the linger.
      for (let index = 30; index < 40; index += 1) {
        calls.push(batcher.add(index));
        await nextTurn();
      }
      await until(() => batches.length === 1, "the batch to start once maxBatch have come");
      assert.deepEqual(
        batches[0]!.items,
        Array.from({ length: 40 }, (_, index) => index),
      );
      batches[0]!.finish();
      assert.deepEqual(
        await Promise.all(calls),
        Array.from({ length: 40 }, (_, index) => index * 3),
      );
    });

    /** When the first batch of `batches` starts, in ms after `since`. */
    async function startedAfter(batches: readonly unknown[], since: number): Promise<number> {
      while (batches.length === 0) await new Promise((done) => setTimeout(done, 2));
      return performance.now() - since;
    }

    it("runs a lingering batch after lingerMs, with the calls made meanwhile", async () => {
      const { batches, run } = heldBatches((item: number) => item);
      const batcher = new Batcher(run, { maxBatch: 1000, lingerMs: 100 });
      const started = performance.now();
      // 25 calls in a row: a mean gap of ~72 ms, under lingerMs (so the batch lingers) and over
      // half of it (so the quiet that ends a linger early, twice the gap, comes after it).
      const calls = Array.from({ length: 25 }, (_, index) => batcher.add(index));
      await nextTurn();
      calls.push(batcher.add(25));
      const after = await startedAfter(batches, started);
      assert.ok(after >= 95, `ran after ${after} ms, before lingerMs`);
      assert.equal(batches[0]!.items.length, 26, "the call made while it lingered joined it");
      batches[0]!.finish();
      assert.equal((await Promise.all(calls)).length, 26);
    });

    it("ends a linger once no call has come for twice the mean gap", async () => {
      const { batches, run } = heldBatches((item: number) => item);
      const batcher = new Batcher(run, { maxBatch: 1000, lingerMs: 10_000 });
      const started = performance.now();
      // 40 calls in a row: a mean gap of ~15 ms; then none, so the batch runs ~30 ms later,
      // long before lingerMs.
      const calls = Array.from({ length: 40 }, (_, index) => batcher.add(index));
      const after = await startedAfter(batches, started);
      assert.ok(after < 5_000, `ran after ${after} ms: the quiet did not end the linger`);
      assert.equal(batches[0]!.items.length, 40);
      batches[0]!.finish();
      assert.equal((await Promise.all(calls)).length, 40);
    });

    it("with lingerMs 0, a stream of calls forms batches as before", async () => {
      const batches: number[][] = [];
      const batcher = new Batcher<number, number>(
        (items) => {
          batches.push([...items]);
          return Promise.resolve([...items]);
        },
        { maxBatch: 100, lingerMs: 0 },
      );
      await Promise.all(Array.from({ length: 50 }, (_, index) => batcher.add(index)));
      assert.equal(await batcher.add(50), 50);
      assert.deepEqual(
        batches.map((batch) => batch.length),
        [50, 1],
      );
    });
  });
});
