import assert from "node:assert/strict";
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { eventually } from "../support/eventually.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { memoryLogger } from "../support/memory-log.ts";

/** A listen stream read over a real connection: its text as it comes. */
interface RawStream {
  readonly response: IncomingMessage;
  /** Resolves once the stream's text holds `count` matches of `pattern`. */
  waitFor(pattern: RegExp, count: number): Promise<string>;
  /** Resolves with the whole text once the server ends the stream. */
  readonly ended: Promise<string>;
}

function openStream(port: number, path: string, token: string): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        agent: false,
        headers: { authorization: `Bearer ${token}` },
      },
      (response) => {
        let text = "";
        let over = false;
        const waiting = new Set<() => void>();
        const checkAll = () => {
          for (const check of waiting) check();
        };
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
          checkAll();
        });
        const ended = new Promise<string>((done) => {
          response.on("close", () => {
            over = true;
            checkAll();
            done(text);
          });
        });
        resolve({
          response,
          ended,
          waitFor: (pattern, count) =>
            new Promise((found, reject) => {
              const check = () => {
                if ((text.match(new RegExp(pattern, "g")) ?? []).length >= count) {
                  waiting.delete(check);
                  found(text);
                } else if (over) {
                  waiting.delete(check);
                  reject(new Error(`the stream ended before ${count} of ${pattern}: ${text}`));
                }
              };
              waiting.add(check);
              check();
            }),
        });
      },
    );
    call.on("error", reject);
    call.end();
  });
}

describe("listen streams under the connection limits (decision 37)", () => {
  const log = memoryLogger("info");
  let api: InProcessApi;
  let port: number;

  before(async () => {
    // A heartbeat less often than the idle timeout: without the stream's own bound, the first
    // quiet moment between two heartbeats would cut it.
    api = await inProcessApi({
      settings: {
        idleTimeout: "50ms",
        listenHeartbeat: "100ms",
        requestTimeout: "100ms",
        headersTimeout: "100ms",
      },
      logger: log.logger,
    });
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    port = (api.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await api.dispose();
  });

  const openSession = async (): Promise<string> => {
    const opened = await api.call("POST", "/listen-sessions", { body: {} });
    assert.equal(opened.statusCode, 200, opened.body);
    const { id } = opened.json<{ id: string }>();
    return `/v1/workspaces/${api.workspaceId}/listen-sessions/${id}/stream`;
  };

  it(
    "logs a stream whose client went away, aborted, with its 200 and duration",
    { timeout: 5000 },
    async () => {
      const path = await openSession();
      const stream = await openStream(port, path, api.token);
      await stream.waitFor(/event: ready/, 1);
      stream.response.destroy();
      const line = await eventually(() =>
        Promise.resolve(log.lines().find((entry) => entry.url === path)),
      );
      assert.equal(line.msg, "request aborted");
      assert.equal(line.aborted, true);
      assert.equal(line.status_code, 200);
      assert.equal(typeof line.duration_ms, "number");
    },
  );

  it(
    "keeps a stream open past many idle timeouts on its heartbeats, and ends it at shutdown",
    { timeout: 5000 },
    async () => {
      const path = await openSession();
      // Taken before the stream is asked for: a loaded machine may read its answer late, with
      // heartbeats already waiting behind it.
      const openedAt = performance.now();
      const stream = await openStream(port, path, api.token);
      // Five heartbeats: 500 ms, ten idle timeouts and five request deadlines.
      await stream.waitFor(/: heartbeat\n\n/, 5);
      assert.ok(performance.now() - openedAt >= 400);
      assert.equal(stream.response.destroyed, false, "still open");
      await api.app.close();
      assert.match(await stream.ended, /event: shutdown\n/);
    },
  );
});
