import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";

type LogEntry = Record<string, unknown>;

/** The server's log lines that are JSON, parsed. */
function entries(fixture: ServerFixture): LogEntry[] {
  return fixture.server
    .log()
    .split("\n")
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogEntry];
      } catch {
        return [];
      }
    });
}

describe("the access log", () => {
  let fixture: ServerFixture;

  before(async () => {
    // The most verbose level, so that the searches below cover everything the server logs.
    fixture = await serverFixture({ SVC_LOG_LEVEL: "trace" });
  });
  after(() => fixture.dispose());

  /**
   * The "request completed" lines once the server has logged a later marker request: the
   * log is one ordered stream, so every line of the requests before it is in by then.
   */
  const completedLines = async (marker: string): Promise<LogEntry[]> => {
    assert.equal(
      (await fetch(new URL(`/healthz?marker=${marker}`, fixture.server.url))).status,
      200,
    );
    await eventually(
      () =>
        Promise.resolve(
          entries(fixture).some((entry) => entry.url === `/healthz?marker=${marker}`)
            ? true
            : undefined,
        ),
      { timeoutMs: 5000, what: "the marker request's line" },
    );
    return entries(fixture).filter((entry) => entry.msg === "request completed");
  };

  it("writes one line per request, with its method, url, status, duration and address", async () => {
    const path = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    const destinationUrl = "https://public.example.test/access-log-body-marker";
    const response = await apiClient(fixture.server.url, fixture.owner.key).post<
      DestinationJson & { secret: string }
    >(path, { url: destinationUrl, events: ["job.completed"] });
    assert.equal(response.status, 201, response.text);

    const lines = (await completedLines("one")).filter(
      (entry) => entry.url === path && entry.method === "POST",
    );
    assert.equal(lines.length, 1, "exactly one line for the request");
    const [line] = lines;
    assert.ok(line);
    assert.equal(line.status_code, 201);
    assert.equal(typeof line.duration_ms, "number");
    assert.ok((line.duration_ms as number) >= 0);
    assert.equal(line.remote_address, "127.0.0.1");
    const all = entries(fixture);
    const ofRequest = all.filter(
      (entry) => entry.reqId !== undefined && entry.reqId === line.reqId,
    );
    assert.deepEqual(
      ofRequest.map((entry) => entry.msg),
      ["request completed"],
      "no other line for that request (Fastify's own pair is off)",
    );
    assert.ok(!all.some((entry) => entry.msg === "incoming request"));

    const log = fixture.server.log();
    assert.ok(!log.includes(fixture.owner.key), "the bearer token is never logged");
    assert.doesNotMatch(log, /bearer/i);
    assert.ok(!log.includes(response.body.secret), "nor the response body's secret");
    assert.ok(!log.includes("access-log-body-marker"), "nor the request body");
  });

  it("logs a refused request too, without the token it presented", async () => {
    const path = `/v1/workspaces/${fixture.owner.id}/webhooks?limit=3`;
    const wrongToken = "svc_access-log-wrong-token";
    const response = await apiClient(fixture.server.url, wrongToken).get(path);
    assert.equal(response.status, 401);

    const lines = (await completedLines("two")).filter((entry) => entry.url === path);
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.ok(line);
    assert.equal(line.method, "GET");
    assert.equal(line.status_code, 401);
    const log = fixture.server.log();
    assert.ok(!log.includes(wrongToken));
    assert.ok(!log.includes(fixture.owner.key));
  });
});
