import assert from "node:assert/strict";
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { describe, it } from "node:test";
import { sqlitePassOnly } from "../support/backend.ts";

const moduleUrl = JSON.stringify(new URL("../../src/lib/block-output.js", import.meta.url).href);

/**
 * A process that writes `count` numbered lines of about 100 bytes through a `BlockOutput` on its
 * standard output (a pipe, made non-blocking as the server's is once `process.stdout` is
 * touched), says `queued` on standard error once it has handed them all over, then runs
 * `after`.
 */
function writer(count: number, after: string): ChildProcessByStdio<null, Readable, Readable> {
  const script = `
    const { BlockOutput } = await import(${moduleUrl});
    process.stdout;
    const output = new BlockOutput(1, { blockBytes: 4096, flushMs: 20 });
    const pad = "x".repeat(90);
    for (let n = 0; n < ${count}; n++) output.write(JSON.stringify({ n, pad }) + "\\n");
    process.stderr.write("queued\\n");
    ${after}`;
  return spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function saidQueued(
  child: ChildProcessByStdio<null, Readable, Readable>,
  signal: AbortSignal,
): Promise<void> {
  for await (const line of createInterface({ input: child.stderr, signal })) {
    if (line === "queued") return;
  }
  throw new Error("the writer ended before it queued its lines");
}

/**
 * Reads the child's lines until `count` have come, checking that they are 0, 1, 2… in order;
 * gives up when the test's `signal` is aborted (its timeout).
 */
async function readNumbered(
  child: ChildProcessByStdio<null, Readable, Readable>,
  count: number,
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  for await (const line of createInterface({ input: child.stdout, signal })) {
    assert.equal((JSON.parse(line) as { n: number }).n, next, "whole lines, in order");
    next += 1;
    if (next === count) return;
  }
  assert.equal(next, count, "every line");
}

describe("standard output in blocks", { skip: sqlitePassOnly }, () => {
  // 20,000 lines of ~110 bytes: 2.2 MB, far more than a pipe holds (64 KiB), so that writes
  // find it full (EAGAIN) and partly full (short writes) while nothing reads it.
  const count = 20_000;

  it(
    "writes every line whole and in order through a pipe whose reader falls behind",
    { timeout: 20_000 },
    async (t) => {
      const child = writer(count, "setInterval(() => undefined, 60_000);");
      try {
        child.stdout.pause();
        await saidQueued(child, t.signal);
        await readNumbered(child, count, t.signal);
      } finally {
        child.kill();
        await once(child, "exit");
      }
    },
  );

  it(
    "writes what it holds when the process exits, waiting for a reader that is behind",
    { timeout: 20_000 },
    async (t) => {
      const child = writer(count, "output.flushSync(); process.exit(0);");
      const exited = once(child, "exit");
      try {
        child.stdout.pause();
        await saidQueued(child, t.signal);
        await readNumbered(child, count, t.signal);
        assert.deepEqual(await exited, [0, null]);
      } finally {
        if (child.exitCode === null) child.kill();
        await exited;
      }
    },
  );

  it(
    "drops its lines once the pipe's reader is gone, and the process goes on",
    { timeout: 20_000 },
    async () => {
      const child = writer(count, "setTimeout(() => process.stderr.write('alive\\n'), 200);");
      child.stdout.destroy();
      const errors: string[] = [];
      for await (const line of createInterface({ input: child.stderr })) errors.push(line);
      const [code] = (await once(child, "exit").catch(() => [child.exitCode])) as [number | null];
      assert.deepEqual(errors, ["queued", "alive"], "no error, and it lived on");
      assert.equal(child.exitCode ?? code, 0);
    },
  );
});
