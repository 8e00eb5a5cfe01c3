import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient } from "../support/api.ts";
import { assertExit, envelope, registerDirectly, svcAgainst } from "../support/cli.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

type Status = "pending" | "delivered" | "failed";

/** Attempt lines of `svc deliveries get`: `<time>  #n  <status>  <ms> ms  <answer>`. */
const attemptLine =
  /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) {2}#(\d+) {2}(\d{3}|---) {2}\s*(\d+) ms {2}(.*)$/;

/**
 * The delivery log from the command line, end to end through the built `svc`: a server
 * process (the schedule 50 ms, 100 ms: three attempts, then `failed`) and receivers on loopback
 * that fail and then recover.
 */
describe("svc deliveries and svc events end to end", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;
  const receivers: Receiver[] = [];

  const receiver = async (status: number): Promise<Receiver> => {
    const started = await startReceiver({ ca, respond: always(status) });
    receivers.push(started);
    return started;
  };
  const register = (target: Receiver) =>
    registerDirectly(fixture, { url: `https://hooks.test:${target.port}/hooks` });
  /** Publishes through `svc events send`; returns the event's id. */
  const send = async (id: string): Promise<string> => {
    const run = await svc([
      "events",
      "send",
      "--type",
      "job.failed",
      "--data",
      JSON.stringify({ id }),
      "--json",
    ]);
    assertExit(run, 0);
    return envelope<{ id: string }>(run).data.id;
  };
  /**
   * The delivery of `eventId` once the server has recorded it `status`. A receiver has each
   * request before the worker records its outcome: only the API can say when it has.
   */
  const recorded = (eventId: string, status: Status) =>
    eventually(
      async () => {
        const list = await api.get<{ data: { id: string; status: Status }[] }>(
          `/v1/workspaces/${fixture.owner.id}/deliveries?event=${eventId}`,
        );
        const [delivery] = list.body.data;
        return delivery?.status === status ? delivery : undefined;
      },
      { what: `the delivery of ${eventId} to be ${status}` },
    );

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    api = apiClient(fixture.server.url, fixture.owner.key);
    svc = svcAgainst(fixture);
  });
  after(async () => {
    await Promise.all(receivers.map((each) => each.close()));
    await fixture.dispose();
  });

  it("a failed delivery: listed as failed, its log one line per attempt, and retry delivers it under the same Webhook-Id", async () => {
    const failing = await receiver(503);
    const destination = await register(failing);
    const eventId = await send("job_1");
    await failing.waitForRequests(3);
    const { id } = await recorded(eventId, "failed");

    const failed = await svc(["deliveries", "list", "--status", "failed"]);
    assertExit(failed, 0);
    const [header, ...rows] = failed.stdout.trimEnd().split("\n");
    assert.match(
      header ?? "",
      /^ID +EVENT_TYPE +STATUS +STATE +FAILURE_REASON +ATTEMPTS +LAST_STATUS_CODE +DESTINATION_ID +CREATED_AT +TEST$/,
    );
    const row = rows.find((line) => line.startsWith(`${id} `));
    assert.deepEqual(row?.split(/\s+/).slice(0, 8), [
      id,
      "job.failed",
      "failed",
      "failed",
      "retries_exhausted",
      "3",
      "503",
      destination.id,
    ]);
    assert.equal(row.split(/\s+/).at(-1), "false", "no test event");

    const log = await svc(["deliveries", "get", id]);
    assertExit(log, 0);
    const [head, attempts] = log.stdout.trimEnd().split("\n\n");
    assert.deepEqual(head?.split("\n"), [
      `id:           ${id}`,
      `event:        ${eventId} (job.failed)`,
      `destination:  ${destination.id}`,
      "status:       failed",
      "state:        failed (retries exhausted)",
      "next attempt: none",
      "attempts:     3",
      "last error:   the receiver answered 503; retries exhausted",
    ]);
    const lines = (attempts ?? "").split("\n").map((line) => attemptLine.exec(line));
    assert.deepEqual(
      lines.map((match) => [match?.[2], match?.[3], match?.[5]]),
      [
        ["1", "503", "Service Unavailable"],
        ["2", "503", "Service Unavailable"],
        ["3", "503", "Service Unavailable"],
      ],
      log.stdout,
    );

    failing.setResponder(always(200));
    const retried = await svc(["deliveries", "retry", id]);
    assertExit(retried, 0);
    assert.match(retried.stdout, /^status: +pending$/m);
    const requests = await failing.waitForRequests(4);
    await recorded(eventId, "delivered");
    const [first] = requests;
    const again = requests[3];
    assert.ok(first && again);
    assert.equal(again.headers["webhook-id"], eventId);
    assert.equal(again.headers["webhook-id"], first.headers["webhook-id"], "the same Webhook-Id");
    assert.ok(again.rawBody.equals(first.rawBody), "the same body bytes");
    verifiedTimestamp(again, destination.secret);

    const delivered = await svc(["deliveries", "get", id]);
    assertExit(delivered, 0);
    assert.match(delivered.stdout, /^status: +delivered$/m);
    const last = delivered.stdout.trimEnd().split("\n").at(-1) ?? "";
    assert.deepEqual(attemptLine.exec(last)?.slice(2, 4), ["4", "200"], delivered.stdout);

    const events = await svc(["events", "list", "--type", "job.failed", "--field", "id"]);
    assertExit(events, 0);
    assert.ok(events.stdout.split("\n").includes(eventId), events.stdout);
    const event = await svc(["events", "get", eventId]);
    assertExit(event, 0);
    assert.match(event.stdout, new RegExp(`^id: +${eventId}$`, "m"));
    assert.match(event.stdout, /^data: +\{"object":\{"id":"job_1"\}\}$/m);
    assert.match(event.stdout, new RegExp(`^ +${id} +${destination.id} +delivered +4 +200 `, "m"));
  });

  it("recover --since 1h sends a destination's failed deliveries again, each once, and they end delivered", async () => {
    const failing = await receiver(502);
    const destination = await register(failing);
    const events = [await send("job_2"), await send("job_3")];
    await failing.waitForRequests(6);
    for (const eventId of events) await recorded(eventId, "failed");
    const listed = await svc([
      "deliveries",
      "list",
      "--destination",
      destination.id,
      "--status",
      "failed",
      "--json",
    ]);
    assertExit(listed, 0);
    assert.deepEqual(
      envelope<{ event_id: string }[]>(listed)
        .data.map((delivery) => delivery.event_id)
        .sort(),
      [...events].sort(),
    );

    failing.setResponder(always(200));
    const recovered = await svc([
      "deliveries",
      "recover",
      "--destination",
      destination.id,
      "--since",
      "1h",
    ]);
    assertExit(recovered, 0);
    assert.equal(recovered.stdout, "queued: 2\n");
    const sentAgain = (await failing.waitForRequests(8)).slice(6);
    for (const eventId of events) await recorded(eventId, "delivered");
    assert.deepEqual(
      sentAgain.map((request) => request.headers["webhook-id"]).sort(),
      [...events].sort(),
      "each recovered notification once, under its own Webhook-Id",
    );
    const delivered = await svc([
      "deliveries",
      "list",
      "--destination",
      destination.id,
      "--status",
      "delivered",
      "--field",
      "event_id",
    ]);
    assert.deepEqual(delivered.stdout.trimEnd().split("\n").sort(), [...events].sort());
    const nothingLeft = await svc([
      "deliveries",
      "recover",
      "--destination",
      destination.id,
      "--since",
      "1h",
      "--json",
    ]);
    assertExit(nothingLeft, 0);
    assert.deepEqual(envelope(nothingLeft).data, { queued: 0 });
  });
});
