import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { redactCredentials } from "../../src/lib/logger.ts";
import { memoryLogger } from "../support/memory-log.ts";

describe("the log", () => {
  it("censors credentials at the top, nested, in arrays, in errors and in bindings", () => {
    const { logger, lines, text } = memoryLogger();
    const error = Object.assign(new Error("it failed"), { token: "tok-in-error" });
    logger.child({ apiKey: "svc_binding" }).info(
      {
        secret: "whsec_top",
        destination: { id: "dst_1", secret: "whsec_nested", headers: { authorization: "B x" } },
        list: [{ password: "pw-in-array" }],
        err: error,
        "idempotency-key": "idem-1",
      },
      "something happened",
    );
    const [line] = lines();
    assert.ok(line !== undefined);
    assert.equal(line.secret, "[redacted]");
    assert.deepEqual(line.destination, {
      id: "dst_1",
      secret: "[redacted]",
      headers: { authorization: "[redacted]" },
    });
    assert.deepEqual(line.list, [{ password: "[redacted]" }]);
    assert.equal(line.apiKey, "[redacted]");
    assert.equal(line["idempotency-key"], "[redacted]");
    const loggedError = line.err as Record<string, unknown>;
    assert.equal(loggedError.message, "it failed", "the error keeps its message");
    assert.equal(loggedError.type, "Error", "and is still serialised as an error");
    assert.equal(loggedError.token, "[redacted]");
    for (const secret of [
      "whsec_",
      "tok-in-error",
      "pw-in-array",
      "svc_binding",
      "idem-1",
      "B x",
    ]) {
      assert.ok(!text().includes(secret), `${secret} is not in the log`);
    }
    // The logged objects themselves are left as they were.
    assert.equal(error.token, "tok-in-error");
  });

  it("censors a request's credential headers after its serializer", () => {
    const { logger, lines } = memoryLogger();
    logger.info({ req: { method: "GET", headers: { authorization: "Bearer svc_x", host: "h" } } });
    assert.deepEqual((lines()[0]?.req as { headers: unknown }).headers, {
      authorization: "[redacted]",
      host: "h",
    });
  });

  it("copies nothing when there is nothing to censor", () => {
    const line = { method: "POST", url: "/v1/x", status_code: 202, nested: { a: [1, 2] } };
    assert.equal(redactCredentials(line), line);
    const error = new Error("plain");
    assert.equal(redactCredentials({ err: error }).err, error);
  });

  it("stops at a depth, so a cycle cannot loop", () => {
    const cycle: Record<string, unknown> = { name: "a" };
    cycle.self = cycle;
    assert.equal(redactCredentials(cycle), cycle);
  });

  it(
    "writes standard output in blocks, and a line alone within a moment, while the process lives on",
    { timeout: 10_000 },
    async () => {
      // A process that logs one line and then stays: no exit flushes it, only the log's timer.
      const child = spawn(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const { createLogger } = await import(${JSON.stringify(new URL("../../src/lib/logger.js", import.meta.url).href)});
         createLogger("info").info({ marker: "alone" }, "one line");
         setTimeout(() => undefined, 60_000);`,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      try {
        const lines = createInterface({ input: child.stdout });
        const [line] = (await once(lines, "line")) as [string];
        assert.equal((JSON.parse(line) as { marker?: string }).marker, "alone");
      } finally {
        child.kill();
        await once(child, "exit");
      }
    },
  );
});
