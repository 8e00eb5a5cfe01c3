import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import type { SendRequest } from "../../src/delivery/http-sender.ts";
import { ThreadedSender } from "../../src/delivery/threaded-sender.ts";
import { runProcess } from "../support/process.ts";
import { sqlitePassOnly } from "../support/backend.ts";

/**
 * The sender thread (decision 20): requests cross to it in batches and each outcome comes back
 * to its own caller. A plain-HTTP receiver in this process answers: its status is the number in
 * the request's path, after the delay in its `x-delay` header.
 */
describe("the delivery sender in a thread", { skip: sqlitePassOnly }, () => {
  let server: Server;
  let base: string;
  const received: { path: string; headers: Record<string, unknown>; body: string }[] = [];

  before(async () => {
    server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        received.push({ path: request.url ?? "", headers: request.headers, body });
        const status = Number(/\/(\d{3})$/.exec(request.url ?? "")?.[1] ?? 200);
        setTimeout(
          () => {
            response.writeHead(status, status === 503 ? { "retry-after": "7" } : {}).end("ok");
          },
          Number(request.headers["x-delay"] ?? 0),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const request = (path: string, headers: Record<string, string> = {}): SendRequest => ({
    url: new URL(`${base}${path}`),
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ path }),
    timeoutMs: 2000,
    addresses: ["127.0.0.1"],
  });

  it("answers each of many concurrent requests with its own receiver's outcome", async () => {
    const sender = new ThreadedSender({ timeoutMs: 2000 });
    try {
      const statuses = Array.from({ length: 300 }, (_, index) => [200, 404, 500, 503][index % 4]);
      const outcomes = await Promise.all(
        statuses.map((status, index) => sender.send(request(`/n${index}/${status}`))),
      );
      outcomes.forEach((outcome, index) => {
        const status = statuses[index];
        assert.deepEqual(
          outcome,
          status === 503
            ? { kind: "response", statusCode: 503, retryAfter: "7", body: "ok" }
            : { kind: "response", statusCode: status, body: "ok" },
        );
      });
      const last = received.find((entry) => entry.path === "/n299/503");
      assert.ok(last);
      assert.equal(last.body, '{"path":"/n299/503"}');
      assert.equal(last.headers["content-type"], "application/json");
    } finally {
      await sender.close();
    }
  });

  it("never lets a request wait for a connection: its timeout is its own exchange", async () => {
    const sender = new ThreadedSender({ timeoutMs: 1000 });
    try {
      // 64 at once to one origin, each answered after 400 ms: behind a pool of 16 connections
      // the third wave would wait 800 ms and time out.
      const outcomes = await Promise.all(
        Array.from({ length: 64 }, (_, index) =>
          sender.send({ ...request(`/slow${index}/204`, { "x-delay": "400" }), timeoutMs: 1000 }),
        ),
      );
      assert.deepEqual(
        new Set(outcomes.map((outcome) => JSON.stringify(outcome))),
        new Set([JSON.stringify({ kind: "response", statusCode: 204 })]),
      );
    } finally {
      await sender.close();
    }
  });

  it("classifies failures in the thread as the sender in the main thread does", async () => {
    const sender = new ThreadedSender({ timeoutMs: 300 });
    try {
      const closed = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, "127.0.0.1", () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => {
            resolve(port);
          });
        });
      });
      const refused = await sender.send({
        ...request("/200"),
        url: new URL(`http://127.0.0.1:${closed}/200`),
      });
      assert.equal(refused.kind === "error" && refused.errorClass, "connection");
      const slow = await sender.send({ ...request("/200", { "x-delay": "1000" }), timeoutMs: 300 });
      assert.deepEqual(slow, {
        kind: "error",
        errorClass: "timeout",
        message: "no answer within 300ms",
      });
    } finally {
      await sender.close();
    }
  });

  it("lets the requests under way finish before close() ends the thread", async () => {
    const sender = new ThreadedSender({ timeoutMs: 2000 });
    const pending = [
      sender.send(request("/200", { "x-delay": "200" })),
      sender.send(request("/500", { "x-delay": "100" })),
    ];
    await sender.close();
    assert.deepEqual(await Promise.all(pending), [
      { kind: "response", statusCode: 200, body: "ok" },
      { kind: "response", statusCode: 500, body: "ok" },
    ]);
    await assert.rejects(sender.send(request("/200")), /the sender is closed/);
  });

  it("keeps the process open until close() has ended the thread, with nothing else to do", async () => {
    const script = fileURLToPath(new URL("../support/close-sender.js", import.meta.url));
    const run = await runProcess(process.execPath, [script, `${base}/closing/202`], {
      env: { PATH: process.env.PATH },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [
      { kind: "response", statusCode: 202, body: "ok" },
      { kind: "response", statusCode: 202, body: "ok" },
    ]);
  });

  it("ends a thread idle for idleThreadMs as a retirement, never one with a request under way", async () => {
    const events: string[] = [];
    let retired = (): void => undefined;
    const sender = new ThreadedSender(
      { timeoutMs: 2000 },
      {
        idleThreadMs: 100,
        onThreadStopped: (error) => events.push(`stopped: ${error.message}`),
        onThreadRetired: () => {
          events.push("retired");
          retired();
        },
      },
    );
    try {
      const retirement = new Promise<void>((resolve) => (retired = resolve));
      assert.deepEqual(await sender.send(request("/idle/200")), {
        kind: "response",
        statusCode: 200,
        body: "ok",
      });
      // Answered after three idle periods: the thread is not idle while it waits.
      assert.deepEqual(await sender.send(request("/idle/201", { "x-delay": "300" })), {
        kind: "response",
        statusCode: 201,
        body: "ok",
      });
      assert.deepEqual(events, []);
      await retirement;
      assert.deepEqual(events, ["retired"]);
      // The next request starts a thread of its own.
      assert.deepEqual(await sender.send(request("/idle/202")), {
        kind: "response",
        statusCode: 202,
        body: "ok",
      });
    } finally {
      await sender.close();
    }
    assert.deepEqual(events, ["retired"], "close() ends the second thread without a report");
  });

  const crashingThread = new URL("../support/crashing-sender-thread.js", import.meta.url);

  it("fails the requests in a thread that dies, says so once, and starts a new one for the next", async () => {
    const stopped: string[] = [];
    const sender = new ThreadedSender(
      { timeoutMs: 2000 },
      {
        threadModule: crashingThread,
        onThreadStopped: (error) => stopped.push(error.message),
      },
    );
    try {
      assert.deepEqual(await sender.send(request("/200")), {
        kind: "response",
        statusCode: 200,
        body: "ok",
      });
      const lost = [
        sender.send(request("/200", { "x-delay": "500" })),
        sender.send(request("/200", { "x-test-crash": "1" })),
      ];
      for (const outcome of await Promise.allSettled(lost)) {
        assert.equal(outcome.status, "rejected");
        assert.match(String(outcome.reason), /the delivery sender thread stopped \(exit code 3\)/);
      }
      assert.deepEqual(await sender.send(request("/201")), {
        kind: "response",
        statusCode: 201,
        body: "ok",
      });
      assert.deepEqual(stopped, ["the delivery sender thread stopped (exit code 3)"]);
    } finally {
      await sender.close();
    }
    assert.equal(stopped.length, 1, "an ending asked for by close() is not reported");
  });

  it("sends a request made after its thread died, but before that was noticed, once or never", async () => {
    const sender = new ThreadedSender({ timeoutMs: 2000 }, { threadModule: crashingThread });
    try {
      await sender.send(request("/warm/200")); // the thread is up
      const crash = sender.send(request("/200", { "x-test-crash": "1" }));
      await new Promise((resolve) => setImmediate(resolve)); // the crash request is posted
      // Hold the event loop while the thread dies: the next request is made before this
      // thread learns of the death.
      const until = Date.now() + 500;
      while (Date.now() < until) {
        // busy
      }
      const late = sender.send(request("/late/201")).catch((error: unknown) => error);
      await assert.rejects(crash, /the delivery sender thread stopped \(exit code 3\)/);
      const outcome = await late;
      await new Promise((resolve) => setTimeout(resolve, 200)); // anything sent has arrived
      const receipts = received.filter((entry) => entry.path === "/late/201").length;
      if (outcome instanceof Error) {
        assert.equal(receipts, 0, `reported as failed (${outcome.message}), yet sent`);
      } else {
        assert.deepEqual(outcome, { kind: "response", statusCode: 201, body: "ok" });
        assert.equal(receipts, 1);
      }
    } finally {
      await sender.close();
    }
  });
});
