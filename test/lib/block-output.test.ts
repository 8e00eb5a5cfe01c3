import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { openSync, closeSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { describe, it } from "node:test";
import { sqlitePassOnly } from "../support/backend.ts";

const moduleUrl = JSON.stringify(new URL("../../src/lib/block-output.js", import.meta.url).href);

interface Writer {
  readonly child: ChildProcess;
  /** Resolves once the child has said `text` on standard error (a line of its own). */
  readonly said: (text: string) => Promise<void>;
  /** What it said on standard error so far, line by line. */
  readonly errors: string[];
}

/**
 * A process that writes `count` numbered lines of about 100 bytes through a `BlockOutput` on its
 * standard output (a pipe unless told, made non-blocking as the server's is once
 * `process.stdout` is touched), says `queued` on standard error once it has handed them all
 * over, then runs `after`. `options` are BlockOutput's, besides its 4 KiB blocks.
 */
function writer(
  count: number,
  after: string,
  { options = "", stdout = "pipe" }: { options?: string; stdout?: "pipe" | number } = {},
): Writer {
  const script = `
    const { BlockOutput } = await import(${moduleUrl});
    process.stdout;
    const output = new BlockOutput(1, { blockBytes: 4096, flushMs: 20, ${options} });
    const pad = "x".repeat(90);
    for (let n = 0; n < ${count}; n++) output.write(JSON.stringify({ n, pad }) + "\\n");
    process.stderr.write("queued\\n");
    ${after}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", stdout, "pipe"],
  });
  const errors: string[] = [];
  const waiters: { text: string; resolve: () => void }[] = [];
  createInterface({ input: child.stderr as Readable }).on("line", (line) => {
    errors.push(line);
    for (const waiter of waiters.filter(({ text }) => text === line)) waiter.resolve();
  });
  return {
    child,
    errors,
    said: (text) =>
      errors.includes(text)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            waiters.push({ text, resolve });
            child.once("exit", () => {
              reject(new Error(`the writer ended without saying ${text}`));
            });
          }),
  };
}

/**
 * Reads the child's lines until `count` have come, checking that they are 0, 1, 2… in order;
 * gives up when the test's `signal` is aborted (its timeout). With `pauseMs`, stops reading
 * that long after each 64 KiB, a reader that keeps falling behind.
 */
async function readNumbered(
  stdout: Readable,
  count: number,
  signal: AbortSignal,
  pauseMs = 0,
): Promise<void> {
  if (pauseMs > 0) {
    let sincePause = 0;
    stdout.on("data", (chunk: Buffer) => {
      sincePause += chunk.length;
      if (sincePause < 65_536) return;
      sincePause = 0;
      stdout.pause();
      setTimeout(() => stdout.resume(), pauseMs);
    });
  }
  let next = 0;
  for await (const line of createInterface({ input: stdout, signal })) {
    assert.equal((JSON.parse(line) as { n: number }).n, next, "whole lines, in order");
    next += 1;
    if (next === count) return;
  }
  assert.equal(next, count, "every line");
}

async function ended(child: Writer["child"]): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill();
    await once(child, "exit");
  }
}

describe("standard output in blocks", { skip: sqlitePassOnly }, () => {
  // 20,000 lines of ~110 bytes: 2.2 MB, far more than a pipe holds (64 KiB), so that writes
  // find it full (EAGAIN) and partly full (short writes) while nothing reads it.
  const count = 20_000;

  for (const [name, options] of [
    ["", ""],
    [", a backlog going out in pieces", "largestWrite: 8192"],
  ] as const) {
    it(
      `writes every line whole and in order through a pipe whose reader falls behind${name}`,
      { timeout: 20_000 },
      async (t) => {
        const { child, said } = writer(count, "setInterval(() => undefined, 60_000);", {
          options,
        });
        try {
          const stdout = child.stdout as Readable;
          stdout.pause();
          await said("queued");
          await readNumbered(stdout, count, t.signal);
        } finally {
          await ended(child);
        }
      },
    );
  }

  it(
    "answers flush(callback) once every line is written, not while the reader is behind",
    { timeout: 20_000 },
    async (t) => {
      const { child, said, errors } = writer(
        count,
        `output.flush(() => process.stderr.write("flushed\\n"));
         setInterval(() => undefined, 60_000);`,
      );
      try {
        const stdout = child.stdout as Readable;
        stdout.pause();
        await said("queued");
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.ok(!errors.includes("flushed"), "not answered while 2 MB wait for the reader");
        await readNumbered(stdout, count, t.signal);
        await said("flushed");
      } finally {
        await ended(child);
      }
    },
  );

  it(
    "writes what it holds at exit for a reader that keeps falling behind, and lines logged after",
    { timeout: 30_000 },
    async (t) => {
      // The reader stops for 0.2 s after each 64 KiB: some 6 s in all, and over 3 s for each
      // 1 MiB write, longer than the exit waits for a reader that takes nothing (2 s), as long
      // as it takes something.
      const { child } = writer(
        count,
        `process.on("exit", () => output.flushSync());
         process.on("exit", () => output.write(JSON.stringify({ n: ${count} }) + "\\n"));
         process.exit(0);`,
      );
      const exited = once(child, "exit");
      try {
        const stdout = child.stdout as Readable;
        stdout.pause();
        await readNumbered(stdout, count + 1, t.signal, 200);
        assert.deepEqual(await exited, [0, null]);
      } finally {
        await ended(child);
      }
    },
  );

  it(
    "gives up at exit on a reader that takes nothing for 2 s, and waits no more for lines after",
    { timeout: 20_000 },
    async () => {
      // Five lines logged after the exit's flush: each would wait its own 2 s if the output
      // went on after giving up.
      const { child } = writer(
        count,
        `process.on("exit", () => output.flushSync());
         process.on("exit", () => { for (let n = 0; n < 5; n++) output.write("late\\n"); });
         process.exit(0);`,
      );
      (child.stdout as Readable).pause();
      const started = Date.now();
      const [code] = (await once(child, "exit")) as [number | null];
      assert.equal(code, 0);
      assert.ok(Date.now() - started < 6000, `exited after ${Date.now() - started} ms`);
    },
  );

  it(
    "drops its lines once the pipe's reader is gone, and the process goes on",
    { timeout: 20_000 },
    async () => {
      const { child, errors } = writer(
        count,
        "setTimeout(() => process.stderr.write('alive\\n'), 200);",
      );
      (child.stdout as Readable).destroy();
      const [code] = (await once(child, "exit")) as [number | null];
      assert.deepEqual(errors, ["queued", "alive"], "no error, and it lived on");
      assert.equal(code, 0);
    },
  );

  it(
    "drops a block that fails otherwise (a full disk), says so once, and goes on writing",
    { timeout: 20_000 },
    async () => {
      const full = openSync("/dev/full", "w");
      try {
        const { child, errors } = writer(
          count,
          `setTimeout(() => {
             for (let n = 0; n < 1000; n++) output.write("more\\n");
             setTimeout(() => process.stderr.write("alive\\n"), 200);
           }, 200);`,
          { stdout: full },
        );
        const [code] = (await once(child, "exit")) as [number | null];
        assert.equal(code, 0);
        assert.equal(errors.length, 3, errors.join("\n"));
        assert.equal(errors[0], "queued");
        assert.match(
          errors[1] ?? "",
          /^svc: writing the log to standard output failed \(ENOSPC\); a block of lines was dropped$/,
        );
        assert.equal(errors[2], "alive");
      } finally {
        closeSync(full);
      }
    },
  );
});
