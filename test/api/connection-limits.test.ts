import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { eventually } from "../support/eventually.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { memoryLogger } from "../support/memory-log.ts";
import {
  closeRawConnections,
  rawConnection,
  type RawConnection,
} from "../support/raw-connection.ts";

/** Starts the in-process API with `settings` on a loopback port. */
async function listening(
  settings: Record<string, string>,
  logger?: ReturnType<typeof memoryLogger>["logger"],
): Promise<{ api: InProcessApi; port: number }> {
  const api = await inProcessApi({ settings, ...(logger === undefined ? {} : { logger }) });
  await api.app.listen({ host: "127.0.0.1", port: 0 });
  return { api, port: (api.app.server.address() as AddressInfo).port };
}

/** A POST whose headers are complete and whose body (of `length` bytes) has not come yet. */
function postHead(api: InProcessApi, length: number): string {
  return (
    `POST /v1/workspaces/${api.workspaceId}/webhooks HTTP/1.1\r\nHost: svc.test\r\n` +
    `Authorization: Bearer ${api.token}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\n\r\n`
  );
}

const healthz = "GET /healthz HTTP/1.1\r\nHost: svc.test\r\n\r\n";

/** Asks /healthz over a new connection from `localAddress`: its status, or the error. */
function healthzFrom(port: number, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const call = httpRequest(
      { host: "127.0.0.1", port, path: "/healthz", localAddress, agent: false },
      (response) => {
        response.resume();
        response.on("end", () => {
          resolve(response.statusCode ?? 0);
        });
      },
    );
    call.on("error", (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? error.message);
    });
    call.end();
  });
}

/** A connection that was answered /healthz and is kept open (keep-alive) afterwards. */
async function servedConnection(port: number, localAddress: string): Promise<RawConnection> {
  const connection = await rawConnection(port, localAddress);
  connection.socket.write(healthz);
  await connection.receivedEnding('{"status":"ok"}');
  return connection;
}

/** Asserts the server closed a new connection from `localAddress` without answering it. */
async function assertRefused(port: number, localAddress: string): Promise<void> {
  const connection = await rawConnection(port, localAddress);
  connection.socket.write(healthz);
  const { answer } = await connection.closed;
  assert.equal(answer, "", "closed at once, with no answer");
}

/** Each waits on the server: a limit that is missing fails it in 5 s instead of hanging. */
describe("time limits of connections and requests (decision 37)", () => {
  const log = memoryLogger("info");
  let api: InProcessApi;
  let port: number;
  const requestTimeout = 300;
  const headersTimeout = 150;
  const keepAliveTimeout = 100;
  const idleTimeout = 100;

  before(async () => {
    ({ api, port } = await listening(
      {
        requestTimeout: `${requestTimeout}ms`,
        headersTimeout: `${headersTimeout}ms`,
        keepAliveTimeout: `${keepAliveTimeout}ms`,
        idleTimeout: `${idleTimeout}ms`,
      },
      log.logger,
    ));
    // Node keeps an idle connection 1 s longer than it announces (\`Keep-Alive: timeout=…\`),
    // so that a client that trusts the header closes first; none here, and the test stays short.
    api.app.server.keepAliveTimeoutBuffer = 0;
  });
  after(async () => {
    closeRawConnections();
    await api.dispose();
  });

  it(
    "cuts a body that trickles in (a byte every 30 ms) at the request deadline, with 408",
    { timeout: 5000 },
    async () => {
      const connection = await rawConnection(port);
      // Each byte comes well within the idle timeout: only the whole-request deadline can end it.
      connection.trickle(postHead(api, 1000), " ", 30);
      const { answer, afterMs } = await connection.closed;
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.match(answer, /"code":"request_timeout"/);
      assert.ok(afterMs >= requestTimeout - 20, `not before the deadline (${afterMs} ms)`);
      assert.ok(afterMs < requestTimeout + 500, `soon after the deadline (${afterMs} ms)`);
    },
  );

  it(
    "cuts headers that trickle in at the headers deadline, with 408",
    { timeout: 5000 },
    async () => {
      const connection = await rawConnection(port);
      connection.trickle("GET /healthz HTTP/1.1\r\nHost: svc.test\r\n", "X-Slow: 1\r\n", 30);
      const { answer, afterMs } = await connection.closed;
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.ok(afterMs >= headersTimeout - 20, `not before the deadline (${afterMs} ms)`);
      assert.ok(afterMs < headersTimeout + 500, `soon after the deadline (${afterMs} ms)`);
    },
  );

  it(
    "closes a connection that sends nothing more of its body for the idle timeout",
    { timeout: 5000 },
    async () => {
      const connection = await rawConnection(port);
      connection.socket.write(postHead(api, 1000));
      const { answer, afterMs } = await connection.closed;
      assert.ok(afterMs >= idleTimeout - 20, `not before the idle timeout (${afterMs} ms)`);
      // The request deadline would have answered 408; the idle timeout closes without a word.
      assert.equal(answer, "", "closed by the idle timeout, not the request deadline");
    },
  );

  it(
    "closes a kept-alive connection that asks nothing more for the keep-alive timeout",
    { timeout: 5000 },
    async () => {
      const connection = await servedConnection(port, "127.0.0.1");
      const answeredAt = performance.now();
      await connection.closed;
      const idleMs = performance.now() - answeredAt;
      // The server's timer starts when it has written the answer, this one when the answer has
      // been read in the same (shared, possibly busy) event loop: only a close at once, not a
      // late read, must fail here.
      assert.ok(
        idleMs >= keepAliveTimeout * 0.3,
        `not before the keep-alive timeout (${idleMs} ms)`,
      );
      assert.ok(idleMs < keepAliveTimeout + 500, `soon after it (${idleMs} ms)`);
    },
  );

  it(
    "logs a request whose body was cut by the deadline, aborted and with no status",
    { timeout: 5000 },
    async () => {
      const connection = await rawConnection(port, "127.0.0.3");
      connection.trickle(postHead(api, 1000), " ", 30);
      await connection.closed;
      const line = await eventually(() =>
        Promise.resolve(
          log
            .lines()
            .find((entry) => entry.remote_address === "127.0.0.3" && entry.method === "POST"),
        ),
      );
      assert.equal(line.msg, "request aborted");
      assert.equal(line.aborted, true);
      assert.equal(line.status_code, null);
      assert.equal(line.url, `/v1/workspaces/${api.workspaceId}/webhooks`);
      // Timed from the request's head, which a loaded machine may parse late: the deadline
      // itself counts from the first byte (the test above), so only its presence is checked.
      assert.equal(typeof line.duration_ms, "number");
      assert.ok(!log.text().includes(api.token), "never the token");
    },
  );
});

describe("caps on open connections (decision 37)", () => {
  let api: InProcessApi;
  let port: number;
  const opened: RawConnection[] = [];

  before(async () => {
    ({ api, port } = await listening({ connectionLimit: "6", connectionLimitPerIp: "3" }));
  });
  after(async () => {
    closeRawConnections();
    await api.dispose();
  });

  it(
    "closes a connection over the per-address cap at once; another address is still answered",
    { timeout: 5000 },
    async () => {
      for (let index = 0; index < 3; index += 1) {
        opened.push(await servedConnection(port, "127.0.0.11"));
      }
      await assertRefused(port, "127.0.0.11");
      assert.equal(await healthzFrom(port, "127.0.0.12"), 200);
    },
  );

  it(
    "closes a connection over the total cap at once, and serves again once one closes",
    { timeout: 5000 },
    async () => {
      // 127.0.0.11 holds 3 (the test before), once the server has closed the one it answered.
      await eventually(
        () =>
          new Promise<true | undefined>((resolve, reject) => {
            api.app.server.getConnections((error, count) => {
              if (error === null) resolve(count === 3 ? true : undefined);
              else reject(error);
            });
          }),
      );
      // 3 more from another address fill the 6.
      for (let index = 0; index < 3; index += 1) {
        opened.push(await servedConnection(port, "127.0.0.13"));
      }
      await assertRefused(port, "127.0.0.14");
      const leaving = opened.pop();
      leaving?.socket.destroy();
      // The server hears of the close a moment after the client: ask until it has.
      assert.equal(
        await eventually(async () => {
          const status = await healthzFrom(port, "127.0.0.14");
          return status === 200 ? status : undefined;
        }),
        200,
      );
    },
  );
});

describe("the settings of connection limits", () => {
  it("refuses a headers timeout longer than the request timeout, and a zero timeout", () => {
    assert.throws(
      () =>
        loadServerConfig({
          env: {},
          flags: { requestTimeout: "5s", headersTimeout: "10s", idleTimeout: "0ms" },
        }),
      (error: Error) =>
        /headersTimeout \(SVC_HEADERS_TIMEOUT\): must be at most the request timeout/.test(
          error.message,
        ) && /idleTimeout \(SVC_IDLE_TIMEOUT\): must be more than 0/.test(error.message),
    );
  });

  it("has safe defaults", () => {
    const config = loadServerConfig({ env: {}, flags: {} });
    assert.deepEqual(
      [
        config.requestTimeout,
        config.headersTimeout,
        config.keepAliveTimeout,
        config.idleTimeout,
        config.connectionLimit,
        config.connectionLimitPerIp,
      ],
      [30_000, 10_000, 72_000, 60_000, 4096, 256],
    );
  });
});
