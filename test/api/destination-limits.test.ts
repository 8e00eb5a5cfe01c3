import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertEnvelope } from "../support/envelope.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

/**
 * A workspace's destinations are bounded (`destinationLimit`), and so is what one publish
 * writes (`eventFanOutLimit`): decision 39.
 */
describe("destinationLimit and eventFanOutLimit", () => {
  let api: InProcessApi;

  before(async () => {
    api = await inProcessApi({ settings: { destinationLimit: "5", eventFanOutLimit: "3" } });
  });
  after(() => api.dispose());

  const create = (events: string[] = ["*"]) =>
    api.call("POST", "/webhooks", { body: { url: `https://${publicTestHost}/hook`, events } });
  const live = async () =>
    (await api.call("GET", "/webhooks?limit=100")).json<{ data: { id: string }[] }>().data;
  const removeAll = async () => {
    for (const { id } of await live()) await api.call("DELETE", `/webhooks/${id}`);
  };

  it("creating past the limit is 409 destination_limit_reached, naming the limit and the setting; listen sessions do not count; deleting one makes room", async () => {
    const sessions = [];
    for (let count = 0; count < 2; count += 1) {
      sessions.push(
        (await api.call("POST", "/listen-sessions", { body: {} })).json<{ id: string }>(),
      );
    }
    for (let count = 0; count < 5; count += 1) assert.equal((await create()).statusCode, 201);
    const refused = await create();
    assertEnvelope(refused, "destination_limit_reached");
    assert.equal(refused.statusCode, 409);
    assert.match(refused.body, /has 5 destinations/);
    assert.match(refused.body, /SVC_DESTINATION_LIMIT/);
    assert.equal((await live()).length, 5, "nothing was created");

    const [first] = await live();
    assert.equal((await api.call("DELETE", `/webhooks/${first?.id}`)).statusCode, 200);
    assert.equal((await create()).statusCode, 201, "a deleted one makes room");
    await removeAll();
    for (const { id } of sessions) await api.call("DELETE", `/listen-sessions/${id}`);
  });

  it("creates at once never pass the limit: the count and the insert are one transaction under the workspace's lock", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => create()));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(statuses, [...Array<number>(5).fill(201), ...Array<number>(15).fill(409)]);
    assert.equal((await live()).length, 5);
    await removeAll();
  });

  it("a publish that would reach more than eventFanOutLimit is refused whole, nothing written, while the others of its batch go on", async () => {
    for (const events of [["*"], ["*"], ["*"], ["job.completed"]]) {
      assert.equal((await create(events)).statusCode, 201);
    }
    // A listen session is not counted: it has its own bound.
    const session = (await api.call("POST", "/listen-sessions", { body: {} })).json<{
      id: string;
    }>();
    const publish = (type: string) =>
      api.call("POST", "/events", { body: { type, data: { object: { type } } } });
    // Sent at once, so that they are written in one batch.
    const [over, within] = await Promise.all([publish("job.completed"), publish("job.failed")]);
    assertEnvelope(over, "event_fan_out_exceeded");
    assert.equal(over.statusCode, 409);
    assert.match(over.body, /sent to 4 destinations; one event may reach at most 3/);
    assert.equal(within.statusCode, 202, within.body);

    const events = (await api.call("GET", "/events")).json<{ data: { type: string }[] }>().data;
    assert.deepEqual(
      events.map((event) => event.type),
      ["job.failed"],
      "the refused event was not written",
    );
    const deliveries = (await api.call("GET", "/deliveries")).json<{
      data: { event_type: string }[];
    }>().data;
    assert.deepEqual(
      deliveries.map((delivery) => delivery.event_type),
      ["job.failed", "job.failed", "job.failed", "job.failed"],
      "three destinations and the listen session",
    );

    // Refused again, with another event beside it: a workspace refused before is counted
    // before its batch is written (SQLite, decision 59), with the same answers.
    const [again, alongside] = await Promise.all([publish("job.completed"), publish("job.failed")]);
    assertEnvelope(again, "event_fan_out_exceeded");
    assert.match(again.body, /sent to 4 destinations; one event may reach at most 3/);
    assert.equal(alongside.statusCode, 202, alongside.body);
    assert.deepEqual(
      (await api.call("GET", "/events"))
        .json<{ data: { type: string }[] }>()
        .data.map((event) => event.type),
      ["job.failed", "job.failed"],
    );

    // Pausing one brings it within the limit.
    const [newest] = await live();
    await api.call("PATCH", `/webhooks/${newest?.id}`, { body: { active: false } });
    assert.equal((await publish("job.completed")).statusCode, 202);
    await api.call("DELETE", `/listen-sessions/${session.id}`);
    await removeAll();
  });
});
