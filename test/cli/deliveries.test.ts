import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { buildProgram } from "../../src/cli/program.ts";
import type { CliIo } from "../../src/cli/io.ts";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import type { AttemptReport, ClaimedDelivery } from "../../src/interfaces.ts";
import { claimUpTo } from "../support/delivery.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { json, startStubApi, type StubApi } from "../support/stub-api.ts";
import { isolatedConfigHome } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

interface DeliveryJson {
  id: string;
  event_id: string;
  destination_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  next_attempt_at: string | null;
  in_flight: boolean;
}
interface Envelope<T> {
  ok: boolean;
  data: T;
  error: { code: string; message: string; status: number | null };
}

const envelope = <T>(run: CliRun): Envelope<T> => JSON.parse(run.stdout) as Envelope<T>;

function assertStatus(run: CliRun, status: number): void {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

/** The id of the delivery of an event to a destination (decision 30: derived from both). */
const deliveryId = (eventId: string, destinationId: string) =>
  `dlv_${eventId.slice(4)}_${destinationId.slice(4)}`;

/** An attempt as a worker reports it. */
function report(
  result: AttemptReport["result"],
  statusCode: number | null,
  responseBody: string | null,
  error: string | null,
  durationMs = 41,
): AttemptReport {
  return {
    attempt: {
      startedAt: new Date(),
      durationMs,
      statusCode,
      errorClass:
        statusCode === null ? "connection" : result.status === "delivered" ? null : "http_status",
      responseBody,
    },
    result,
    error,
  };
}

/** The API in this process, listening on loopback so that `svc` reaches it over HTTP. */
async function listeningApi(): Promise<{ api: InProcessApi; url: string }> {
  const api = await inProcessApi();
  await api.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = api.app.server.address() as AddressInfo;
  return { api, url: `http://127.0.0.1:${port}` };
}

/** Attempts every due delivery, each as `outcome` says. */
async function work(
  api: InProcessApi,
  outcome: (claimed: ClaimedDelivery) => AttemptReport,
): Promise<number> {
  const claims = await claimUpTo(api.store, "test-worker", 1000, 60_000);
  for (const claimed of claims) {
    await api.store.queue.finishAttempt(claimed.lease, claimed.seq, outcome(claimed));
  }
  return claims.length;
}

describe("svc events and svc deliveries against the API (issue 17)", () => {
  let api: InProcessApi;
  let env: NodeJS.ProcessEnv;
  let a: string;
  let b: string;
  /** Oldest first: job.completed, job.failed, collection.completed. */
  const events: string[] = [];

  const svc = (args: readonly string[], token?: string) =>
    runCliInMemory(args, {
      env: { ...env, ...(token === undefined ? {} : { SERVICE_API_KEY: token }) },
    });
  const apiGet = async <T>(path: string): Promise<T> => {
    const response = await api.call("GET", path);
    assert.equal(response.statusCode, 200, response.body);
    return response.json<T>();
  };
  const publish = async (type: string) => {
    const response = await api.call("POST", "/events", {
      body: { type, data: { object: { id: `job_${events.length}` } } },
    });
    assert.equal(response.statusCode, 202, response.body);
    events.push(response.json<{ id: string }>().id);
  };
  const register = async (path: string, subscribed?: string[]) => {
    const response = await api.call("POST", "/webhooks", {
      body: {
        url: `https://${publicTestHost}/${path}`,
        ...(subscribed ? { events: subscribed } : {}),
      },
    });
    assert.equal(response.statusCode, 201, response.body);
    return response.json<{ id: string }>().id;
  };

  before(async () => {
    const listening = await listeningApi();
    api = listening.api;
    env = {
      SERVICE_API_URL: listening.url,
      SERVICE_API_KEY: api.token,
      SERVICE_WORKSPACE_ID: api.workspaceId,
      XDG_CONFIG_HOME: isolatedConfigHome,
    };
    a = await register("a");
    b = await register("b", ["job.failed"]);
    for (const type of ["job.completed", "job.failed", "collection.completed"]) await publish(type);
    const [completed = "", jobFailed = "", collection = ""] = events;
    // The first attempts: one delivered, one to be tried again, two failed for good.
    await work(api, (claimed) => {
      const to = deliveryId(claimed.eventId, claimed.destination.id);
      if (to === deliveryId(completed, a)) return report({ status: "delivered" }, 200, "ok", null);
      if (to === deliveryId(jobFailed, a)) {
        return report(
          { status: "pending", nextAttemptAt: new Date(Date.now() - 1000) },
          503,
          "Service Unavailable\nplease retry later",
          "the receiver answered 503",
        );
      }
      if (to === deliveryId(jobFailed, b)) {
        return report(
          { status: "failed", reason: "retries_exhausted" },
          null,
          null,
          "connection refused (ECONNREFUSED)",
          3,
        );
      }
      assert.equal(to, deliveryId(collection, a));
      return report(
        { status: "failed", reason: "retries_exhausted" },
        500,
        `\u001b]0;pwned\u0007boom ${"x".repeat(200)}`,
        "the receiver answered 500",
        1234,
      );
    });
    // The second attempt of job.failed to a: an empty answer, so its line shows the error.
    assert.equal(
      await work(api, () =>
        report(
          { status: "failed", reason: "retries_exhausted" },
          502,
          "",
          "the receiver answered 502",
        ),
      ),
      1,
    );
  });
  after(() => api.dispose());

  describe("events", () => {
    it("list prints a table of id, type, api_version and created, newest first", async () => {
      const run = await svc(["events", "list"]);
      assertStatus(run, 0);
      const [header, ...rows] = run.stdout.trimEnd().split("\n");
      assert.deepEqual(header?.split(/\s+/), ["ID", "TYPE", "API_VERSION", "CREATED", "TEST"]);
      for (const row of rows) {
        // An ISO 8601 time, as every other list prints one; JSON keeps the Unix seconds.
        assert.match(row.split(/\s+/)[3] ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/, row);
      }
      assert.deepEqual(
        rows.map((row) => row.split(/\s+/).slice(0, 3)),
        [...events]
          .reverse()
          .map((id, index) => [
            id,
            ["collection.completed", "job.failed", "job.completed"][index],
            "2026-11-01",
          ]),
      );
      assert.equal(run.stderr, "");
    });

    it("list --json is the API's events; --type and --since/--until filter", async () => {
      const all = envelope<Record<string, unknown>[]>(await svc(["events", "list", "--json"]));
      assert.deepEqual(all.data, (await apiGet<{ data: unknown[] }>("/events")).data);
      const failed = await svc(["events", "list", "--type", "job.failed", "--field", "id"]);
      assert.equal(failed.stdout, `${events[1]}\n`);
      const recent = await svc(["events", "list", "--since", "1h", "--field", "id"]);
      assert.equal(recent.stdout.trimEnd().split("\n").length, 3);
      const old = await svc(["events", "list", "--until", "1h"]);
      assertStatus(old, 0);
      assert.equal(old.stdout, "");
      assert.match(old.stderr, /No events in workspace ws_in_process match these filters\./);
      const fields = await svc([
        "events",
        "list",
        "--fields",
        "type,id",
        "--type",
        "job.completed",
      ]);
      assert.deepEqual(
        fields.stdout
          .trimEnd()
          .split("\n")
          .map((line) => line.split(/\s+/)),
        [
          ["TYPE", "ID"],
          ["job.completed", events[0]],
        ],
      );
    });

    it("get shows the event, then one line per delivery", async () => {
      const eventId = events[1] ?? "";
      const run = await svc(["events", "get", eventId]);
      assertStatus(run, 0);
      const lines = run.stdout.trimEnd().split("\n");
      assert.equal(lines[0], `id:          ${eventId}`);
      assert.equal(lines[1], "type:        job.failed");
      assert.equal(lines[2], "api_version: 2026-11-01");
      assert.match(lines[3] ?? "", /^created: {5}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
      assert.equal(lines[4], 'data:        {"object":{"id":"job_1"}}');
      assert.equal(lines[5], "deliveries:  2");
      assert.deepEqual(lines[6]?.trim().split(/\s+/), [
        "ID",
        "DESTINATION_ID",
        "STATUS",
        "ATTEMPTS",
        "LAST_STATUS_CODE",
        "LAST_ATTEMPT_AT",
      ]);
      const rows = lines.slice(7).map((line) => line.trim().split(/\s+/).slice(0, 5));
      assert.deepEqual(
        rows.sort((x, y) => (x[0] ?? "").localeCompare(y[0] ?? "")),
        [
          [deliveryId(eventId, a), a, "failed", "2", "502"],
          [deliveryId(eventId, b), b, "failed", "1", "-"],
        ].sort((x, y) => (x[0] ?? "").localeCompare(y[0] ?? "")),
      );
      const json = envelope(await svc(["events", "get", eventId, "--json"]));
      assert.deepEqual(json.data, await apiGet(`/events/${eventId}`));
      const data = await svc(["events", "get", eventId, "--field", "data"]);
      assert.equal(data.stdout, '{"object":{"id":"job_1"}}\n');
    });

    it("get of an unknown event is not_found and of one past the retention event_expired: exit 5", async () => {
      // A well-formed id of now that names nothing (an id's time says whether it could be expired).
      const id = `evt_${Date.now().toString(16).padStart(12, "0")}ffffffffffffffff`;
      const unknown = await svc(["events", "get", id]);
      assertStatus(unknown, 5);
      assert.equal(unknown.stderr, `error: No event ${id} in this workspace. (not_found)\n`);
      const old = `evt_${(Date.now() - 365 * 86_400_000).toString(16).padStart(12, "0")}0123456789abcdef`;
      const expired = await svc(["events", "get", old, "--json"]);
      assertStatus(expired, 5);
      assert.equal(envelope(expired).error.code, "event_expired");
      assert.equal(envelope(expired).error.status, 404);
    });
  });

  describe("deliveries", () => {
    it("list prints a table of id, event_type, status, attempts, last_status_code, destination and created_at", async () => {
      const run = await svc(["deliveries", "list"]);
      assertStatus(run, 0);
      const [header, ...rows] = run.stdout.trimEnd().split("\n");
      assert.deepEqual(header?.split(/\s+/), [
        "ID",
        "EVENT_TYPE",
        "STATUS",
        "STATE",
        "FAILURE_REASON",
        "ATTEMPTS",
        "LAST_STATUS_CODE",
        "DESTINATION_ID",
        "CREATED_AT",
        "TEST",
      ]);
      assert.equal(rows.length, 4);
      const byId = new Map(rows.map((row) => [row.split(/\s+/)[0], row.split(/\s+/).slice(1, 8)]));
      assert.deepEqual(byId.get(deliveryId(events[0] ?? "", a)), [
        "job.completed",
        "delivered",
        "delivered",
        "-",
        "1",
        "200",
        a,
      ]);
      assert.deepEqual(byId.get(deliveryId(events[2] ?? "", a)), [
        "collection.completed",
        "failed",
        "failed",
        "retries_exhausted",
        "1",
        "500",
        a,
      ]);
    });

    it("list filters by status, destination, event and time; --json has every member", async () => {
      const ids = async (...filters: string[]) => {
        const run = await svc(["deliveries", "list", ...filters, "--field", "id"]);
        assertStatus(run, 0);
        return run.stdout
          .trimEnd()
          .split("\n")
          .filter((line) => line !== "")
          .sort();
      };
      const [completed = "", jobFailed = "", collection = ""] = events;
      assert.deepEqual(
        await ids("--status", "failed"),
        [deliveryId(jobFailed, a), deliveryId(jobFailed, b), deliveryId(collection, a)].sort(),
      );
      assert.deepEqual(await ids("--status", "delivered"), [deliveryId(completed, a)]);
      assert.deepEqual(await ids("--status", "pending"), []);
      assert.deepEqual(await ids("--destination", b), [deliveryId(jobFailed, b)]);
      assert.deepEqual(
        await ids("--event", jobFailed),
        [deliveryId(jobFailed, a), deliveryId(jobFailed, b)].sort(),
      );
      assert.deepEqual(
        await ids("--destination", a, "--status", "failed", "--since", "30m"),
        [deliveryId(jobFailed, a), deliveryId(collection, a)].sort(),
      );
      assert.deepEqual(await ids("--until", "2026-01-01T00:00:00Z"), []);
      const json = envelope<DeliveryJson[]>(await svc(["deliveries", "list", "--json"]));
      assert.deepEqual(json.data, (await apiGet<{ data: unknown[] }>("/deliveries")).data);
      assert.deepEqual(Object.keys(json.data[0] ?? {}), [
        "id",
        "event_id",
        "destination_id",
        "event_type",
        "status",
        "attempts",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "last_status_code",
        "last_error",
        "in_flight",
        "state",
        "failure_reason",
        "test",
      ]);
      const selected = envelope<Record<string, unknown>[]>(
        await svc([
          "deliveries",
          "list",
          "--destination",
          b,
          "--fields",
          "status,last_error",
          "--json",
        ]),
      );
      assert.deepEqual(selected.data, [
        { status: "failed", last_error: "connection refused (ECONNREFUSED)" },
      ]);
    });

    it("get reads like a log: a few header lines, then one line per attempt", async () => {
      const id = deliveryId(events[1] ?? "", a);
      const run = await svc(["deliveries", "get", id]);
      assertStatus(run, 0);
      const [head, log] = run.stdout.trimEnd().split("\n\n");
      assert.deepEqual(head?.split("\n"), [
        `id:           ${id}`,
        `event:        ${events[1]} (job.failed)`,
        `destination:  ${a}`,
        "status:       failed",
        "state:        failed (retries exhausted)",
        "next attempt: none",
        "attempts:     2",
        "last error:   the receiver answered 502",
      ]);
      const lines = log?.split("\n") ?? [];
      assert.equal(lines.length, 2, "one line per attempt");
      const time = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
      assert.match(
        lines[0] ?? "",
        new RegExp(`^${time} {2}#1 {2}503 {2}41 ms {2}Service Unavailable$`),
      );
      assert.match(
        lines[1] ?? "",
        new RegExp(`^${time} {2}#2 {2}502 {2}41 ms {2}the receiver answered 502$`),
      );
    });

    it("get shows no status code as ---, escapes what the receiver answered and cuts it short", async () => {
      const refused = await svc(["deliveries", "get", deliveryId(events[1] ?? "", b)]);
      assertStatus(refused, 0);
      assert.match(
        refused.stdout,
        /\n\S+ {2}#1 {2}--- {2}3 ms {2}connection refused \(ECONNREFUSED\)\n$/,
      );
      const hostile = await svc(["deliveries", "get", deliveryId(events[2] ?? "", a)]);
      assertStatus(hostile, 0);
      const line = hostile.stdout.trimEnd().split("\n").at(-1) ?? "";
      // eslint-disable-next-line no-control-regex -- control characters are what it looks for
      assert.doesNotMatch(hostile.stdout, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      assert.match(line, / {2}#1 {2}500 {2}1234 ms {2}\\u001b\]0;pwned\\u0007boom x+…$/);
      assert.ok(line.length < 200, "the answer is cut short on its line");
      const json = envelope<{ attempts: { response_body: string }[]; attempt_count: number }>(
        await svc(["deliveries", "get", deliveryId(events[2] ?? "", a), "--json"]),
      );
      assert.equal(json.data.attempt_count, 1);
      assert.equal(
        json.data.attempts[0]?.response_body,
        `\u001b]0;pwned\u0007boom ${"x".repeat(200)}`,
        "--json gives the answer exactly",
      );
      const status = await svc([
        "deliveries",
        "get",
        deliveryId(events[0] ?? "", a),
        "--field",
        "status",
      ]);
      assert.equal(status.stdout, "delivered\n");
    });

    it("get of an unknown or expired delivery: exit 5, not_found or delivery_expired", async () => {
      const unknown = await svc([
        "deliveries",
        "get",
        deliveryId(events[0] ?? "", "dst_000000000000000000000000"),
      ]);
      assertStatus(unknown, 5);
      assert.match(unknown.stderr, /\(not_found\)\n$/);
      const time = (Date.now() - 365 * 86_400_000).toString(16).padStart(12, "0");
      const expired = await svc([
        "deliveries",
        "get",
        `dlv_${time}0123456789abcdef_${a.slice(4)}`,
        "--json",
      ]);
      assertStatus(expired, 5);
      assert.equal(envelope(expired).error.code, "delivery_expired");
    });

    it("retry queues a delivery again and prints it, pending; --json gives it as the API does", async () => {
      const id = deliveryId(events[2] ?? "", a);
      const run = await svc(["deliveries", "retry", id]);
      assertStatus(run, 0);
      assert.match(run.stdout, new RegExp(`^id: +${id}$`, "m"));
      assert.match(run.stdout, /^status: +pending$/m);
      assert.match(run.stdout, /^attempts: +1$/m, "the attempts made are kept");
      assert.match(run.stderr, new RegExp(`svc deliveries get ${id}`));
      const listed = await svc(["deliveries", "list", "--status", "pending", "--field", "id"]);
      assert.equal(listed.stdout, `${id}\n`);
      const again = envelope<DeliveryJson>(await svc(["deliveries", "retry", id, "--json"]));
      assert.equal(again.data.id, id);
      assert.equal(again.data.status, "pending");
      assert.ok(again.data.next_attempt_at !== null);
    });

    it("retry of a delivery a worker holds: 409 delivery_in_flight, exit 3", async () => {
      const id = deliveryId(events[2] ?? "", a);
      const [claimed] = await claimUpTo(api.store, "test-worker", 1000, 60_000);
      assert.ok(claimed);
      const run = await svc(["deliveries", "retry", id]);
      assertStatus(run, 3);
      assert.match(
        run.stderr,
        /A worker is attempting this delivery now.*\(delivery_in_flight\)\n$/,
      );
      const json = await svc(["deliveries", "retry", id, "--json"]);
      assert.deepEqual(
        { code: envelope(json).error.code, status: envelope(json).error.status },
        { code: "delivery_in_flight", status: 409 },
      );
      const get = await svc(["deliveries", "get", id]);
      assert.match(get.stdout, /^next attempt: now \(a worker is attempting it\)$/m);
      await api.store.queue.finishAttempt(
        claimed.lease,
        claimed.seq,
        report(
          { status: "failed", reason: "retries_exhausted" },
          500,
          "boom",
          "the receiver answered 500",
        ),
      );
    });

    it("recover sends a destination's failed deliveries again and prints queued: n", async () => {
      const run = await svc(["deliveries", "recover", "--destination", a, "--since", "1h"]);
      assertStatus(run, 0);
      assert.equal(run.stdout, "queued: 2\n");
      const pending = await svc([
        "deliveries",
        "list",
        "--destination",
        a,
        "--status",
        "pending",
        "--field",
        "id",
      ]);
      assert.deepEqual(
        pending.stdout.trimEnd().split("\n").sort(),
        [deliveryId(events[1] ?? "", a), deliveryId(events[2] ?? "", a)].sort(),
      );
      const again = await svc([
        "deliveries",
        "recover",
        "--destination",
        a,
        "--since",
        new Date(Date.now() - 3_600_000).toISOString(),
        "--json",
      ]);
      assertStatus(again, 0);
      assert.deepEqual(envelope(again).data, { queued: 0 });
      assert.match(again.stderr, /No failed deliveries to dst_\w+ created since /);
    });

    it("a paused destination: retry and recover are destination_inactive, exit 3", async () => {
      const paused = await api.call("PATCH", `/webhooks/${b}`, { body: { active: false } });
      assert.equal(paused.statusCode, 200, paused.body);
      try {
        const retry = await svc(["deliveries", "retry", deliveryId(events[1] ?? "", b)]);
        assertStatus(retry, 3);
        assert.match(retry.stderr, /paused or deleted.*\(destination_inactive\)\n$/);
        const recover = await svc([
          "deliveries",
          "recover",
          "--destination",
          b,
          "--since",
          "1d",
          "--json",
        ]);
        assertStatus(recover, 3);
        assert.equal(envelope(recover).error.code, "destination_inactive");
      } finally {
        await api.call("PATCH", `/webhooks/${b}`, { body: { active: true } });
      }
    });
  });

  describe("workspaces and scopes", () => {
    it("another workspace's event, delivery and destination are not found there: exit 5", async () => {
      const otherToken = newApiToken();
      await api.store.credentials.createWorkspace({ id: "ws_other", name: "other" });
      await api.store.credentials.createApiKey({
        id: "key_other",
        workspaceId: "ws_other",
        tokenHash: hashToken(otherToken),
        scopes: ["events:write", "webhooks:write"],
      });
      const asOther = (args: readonly string[]) =>
        svc([...args, "--workspace", "ws_other"], otherToken);
      const id = deliveryId(events[1] ?? "", b);
      for (const args of [
        ["events", "get", events[0] ?? ""],
        ["deliveries", "get", id],
        ["deliveries", "retry", id],
        ["deliveries", "recover", "--destination", b, "--since", "1d"],
      ]) {
        const run = await asOther(args);
        assertStatus(run, 5);
        assert.match(run.stderr, /\(not_found\)\n$/, args.join(" "));
      }
      const list = await asOther(["deliveries", "list"]);
      assertStatus(list, 0);
      assert.equal(list.stdout, "");
      assert.match(list.stderr, /No deliveries in workspace ws_other\./);
    });

    it("reading needs events:read and sending again events:write: exit 4, insufficient_scope", async () => {
      const webhooksOnly = await api.key(["webhooks:write"]);
      const reader = await api.key(["events:read"]);
      const id = deliveryId(events[0] ?? "", a);
      for (const args of [
        ["events", "list"],
        ["events", "get", events[0] ?? ""],
        ["deliveries", "list"],
        ["deliveries", "get", id],
      ]) {
        const refused = await svc([...args, "--json"], webhooksOnly);
        assertStatus(refused, 4);
        assert.equal(envelope(refused).error.code, "insufficient_scope", args.join(" "));
        assertStatus(await svc(args, reader), 0);
      }
      for (const args of [
        ["deliveries", "retry", id],
        ["deliveries", "recover", "--destination", a, "--since", "1h"],
      ]) {
        const refused = await svc(args, reader);
        assertStatus(refused, 4);
        assert.match(refused.stderr, /\(insufficient_scope\)\n$/, args.join(" "));
      }
    });
  });
});

describe("svc events list and svc deliveries list follow every page with --page-all", () => {
  let api: InProcessApi;
  let env: NodeJS.ProcessEnv;
  const published: string[] = [];

  before(async () => {
    const listening = await listeningApi();
    api = listening.api;
    env = {
      SERVICE_API_URL: listening.url,
      SERVICE_API_KEY: api.token,
      SERVICE_WORKSPACE_ID: api.workspaceId,
      XDG_CONFIG_HOME: isolatedConfigHome,
    };
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/p` },
    });
    assert.equal(created.statusCode, 201, created.body);
    // One more than the largest page.
    for (let n = 0; n < 101; n += 1) {
      const response = await api.call("POST", "/events", {
        body: { type: "job.completed", data: { object: { n } } },
      });
      assert.equal(response.statusCode, 202, response.body);
      published.push(response.json<{ id: string }>().id);
    }
  });
  after(() => api.dispose());

  const svc = (args: readonly string[]) => runCliInMemory(args, { env });

  it("without --page-all: the API's default page, and a hint on stderr", async () => {
    for (const group of ["events", "deliveries"]) {
      const run = await svc([group, "list", "--field", "id"]);
      assertStatus(run, 0);
      assert.equal(run.stdout.trimEnd().split("\n").length, 20);
      assert.match(
        run.stderr,
        new RegExp(`More ${group} exist than this page shows; add --page-all`),
      );
    }
  });

  it("with --page-all: every item, newest first, in pages of 100", async () => {
    const ids = await svc(["events", "list", "--page-all", "--field", "id"]);
    assertStatus(ids, 0);
    assert.deepEqual(ids.stdout.trimEnd().split("\n"), [...published].reverse());
    assert.equal(ids.stderr, "");
    const deliveries = envelope<DeliveryJson[]>(
      await svc(["deliveries", "list", "--page-all", "--json"]),
    );
    assert.deepEqual(
      deliveries.data.map((delivery) => delivery.event_id),
      [...published].reverse(),
    );
    const raw = await svc(["deliveries", "list", "--page-all", "--raw"]);
    const pages = raw.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { data: unknown[] });
    assert.deepEqual(
      pages.map((page) => page.data.length),
      [100, 1],
      "each page's body as received, one per line",
    );
  });
});

describe("svc events and svc deliveries: what is refused or previewed sends nothing", () => {
  let stub: StubApi;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    stub = await startStubApi();
    env = {
      SERVICE_API_URL: stub.url,
      SERVICE_API_KEY: "svc_test",
      SERVICE_WORKSPACE_ID: "ws_1",
      XDG_CONFIG_HOME: isolatedConfigHome,
    };
  });
  after(() => stub.close());

  const svc = (args: readonly string[]) => runCliInMemory(args, { env });
  const dlv = "dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93";

  it("events send without --data publishes a sample of the type, with new ids each time", async () => {
    const preview = async () => {
      const run = await svc(["events", "send", "--type", "job.failed", "--json", "--dry-run"]);
      assertStatus(run, 0);
      return envelope<{
        request: { body: { type: string; data: { object: Record<string, unknown> } } };
      }>(run).data.request.body;
    };
    const [first, second] = [await preview(), await preview()];
    assert.equal(first.type, "job.failed");
    assert.equal(first.data.object.status, "failed");
    assert.match(String(first.data.object.id), /^job_[0-9a-f]{12}$/);
    assert.notEqual(first.data.object.id, second.data.object.id);
  });

  it("--dry-run of retry and recover shows the request with an Idempotency-Key, --since as a time", async () => {
    stub.received.length = 0;
    const retry = await svc(["deliveries", "retry", dlv, "--dry-run"]);
    assertStatus(retry, 0);
    const lines = retry.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `POST ${stub.url}/v1/workspaces/ws_1/deliveries/${dlv}/retry`);
    assert.match(retry.stdout, /^Idempotency-Key: svc-[0-9a-f-]{36}$/m);
    assert.match(retry.stdout, /^Authorization: Bearer \[redacted\]$/m);
    assert.match(retry.stderr, /Dry run: nothing was sent/);

    const before = Date.now();
    const recover = await svc([
      "deliveries",
      "recover",
      "--destination",
      "dst_5f0c2a9e81b34d7c6a1e0f93",
      "--since",
      "2h",
      "--idempotency-key",
      "recover-1",
      "--json",
      "--dry-run",
    ]);
    assertStatus(recover, 0);
    const request = envelope<{
      dry_run: boolean;
      request: {
        method: string;
        url: string;
        headers: Record<string, string>;
        body: { since: string };
      };
    }>(recover).data.request;
    assert.equal(request.method, "POST");
    assert.equal(
      request.url,
      `${stub.url}/v1/workspaces/ws_1/webhooks/dst_5f0c2a9e81b34d7c6a1e0f93/recover`,
    );
    assert.equal(request.headers["Idempotency-Key"], "recover-1");
    const since = Date.parse(request.body.since);
    assert.ok(
      Math.abs(before - 2 * 3_600_000 - since) < 5_000,
      `--since 2h is ${request.body.since}`,
    );
    assert.match(request.body.since, /Z$/);

    const list = await svc([
      "deliveries",
      "list",
      "--status",
      "failed",
      "--since",
      "30m",
      "--page-all",
      "--dry-run",
    ]);
    assertStatus(list, 0);
    const url = new URL(list.stdout.split("\n")[0]?.replace(/^GET /, "") ?? "");
    assert.equal(url.searchParams.get("status"), "failed");
    assert.equal(url.searchParams.get("limit"), "100");
    assert.match(url.searchParams.get("since") ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(stub.received, [], "nothing was sent");
  });

  it("bad times, statuses and types, and missing options, are usage errors (exit 2), sending nothing", async () => {
    stub.received.length = 0;
    for (const [args, message] of [
      [
        ["deliveries", "list", "--since", "yesterday"],
        /--since must be an ISO 8601 time with a zone/,
      ],
      [
        ["deliveries", "list", "--until", "2026-11-25"],
        /--until must be an ISO 8601 time with a zone/,
      ],
      [
        ["deliveries", "list", "--since", "1h", "--until", "2h"],
        /--since \(.*\) must be before --until/,
      ],
      [["deliveries", "list", "--status", "lost"], /argument 'lost' is invalid/],
      [["events", "list", "--type", "job.started"], /argument 'job.started' is invalid/],
      [["events", "list", "--since", "5 minutes"], /--since must be/],
      [["deliveries", "recover", "--since", "1h"], /--destination is required/],
      [["deliveries", "recover", "--destination", "dst_1"], /--since is required/],
      [["deliveries", "recover", "--destination", "dst_1", "--since", "soon"], /--since must be/],
      [["deliveries", "retry"], /missing required argument 'id'/],
      [["deliveries", "retry", dlv, "--idempotency-key", " "], /--idempotency-key must be/],
      [["deliveries", "list", "--yes"], /does not take --yes/],
      [["deliveries", "get", dlv, "--stdin"], /does not take --stdin/],
      [["events", "get", "evt_1", "--page-all"], /does not take --page-all/],
      [["deliveries", "list", "--fields", "id,secret"], /no member "secret"/],
      [
        ["deliveries", "retry", dlv, "--dry-run", "--raw"],
        /--raw cannot be combined with --dry-run/,
      ],
    ] as const) {
      const run = await svc(args);
      assertStatus(run, 2);
      assert.match(run.stderr, message, args.join(" "));
    }
    const json = await svc(["deliveries", "list", "--since", "yesterday", "--json"]);
    assertStatus(json, 2);
    assert.equal(envelope(json).error.code, "usage_error");
    assert.deepEqual(stub.received, [], "nothing was sent");
  });

  it("--page-all stops when the API repeats a cursor", async () => {
    stub.answer(json(200, { data: [], next_cursor: "same" }));
    const run = await svc(["events", "list", "--page-all"]);
    assertStatus(run, 1);
    assert.match(run.stderr, /The API repeated a pagination cursor; stopping\. \(bad_response\)/);
  });

  it("--output writes the printed result to a new file instead of stdout", async () => {
    const dir = await tempDir();
    try {
      stub.answer(json(202, { queued: 3 }));
      const file = join(dir.path, "recovered.txt");
      const args = ["deliveries", "recover", "--destination", "dst_1", "--since", "1h"];
      const run = await svc([...args, "--output", file]);
      assertStatus(run, 0);
      assert.equal(run.stdout, "");
      assert.match(run.stderr, /Wrote the result to .*recovered\.txt\./);
      assert.equal(await readFile(file, "utf8"), "queued: 3\n");
      const sent = stub.received.length;
      const again = await svc([...args, "--output", file]);
      assertStatus(again, 2);
      assert.match(again.stderr, /already exists; it is never overwritten.*\(output_exists\)/);
      assert.equal(stub.received.length, sent, "refused before anything is sent");
    } finally {
      await dir.cleanup();
    }
  });

  it("--timing reports each request on stderr", async () => {
    stub.answer(json(200, { data: [], next_cursor: null }));
    const run = await svc(["deliveries", "list", "--timing"]);
    assertStatus(run, 0);
    assert.match(
      run.stderr,
      /^timing: GET http:\/\/127\.0\.0\.1:\d+\/v1\/workspaces\/ws_1\/deliveries 200 in /m,
    );
  });
});

describe("the command groups", () => {
  const io = { env: {} } as unknown as CliIo;
  const names = async (group: string) =>
    (await buildProgram(io, [])).commands
      .find((command) => command.name() === group)
      ?.commands.map((command) => command.name());

  it("svc webhooks keeps exactly its five subcommands; events and deliveries have theirs", async () => {
    assert.deepEqual(await names("webhooks"), ["list", "create", "get", "update", "delete"]);
    assert.deepEqual(await names("events"), ["send", "list", "get"]);
    assert.deepEqual(await names("deliveries"), ["list", "get", "retry", "recover"]);
  });
});
