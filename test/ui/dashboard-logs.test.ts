import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { apiClient, type ApiClient } from "../support/api.ts";
import { createUser, type TestUser } from "../support/auth.ts";
import { launchBrowser, screenshot, seriousViolations } from "../support/browser.ts";
import { deliveryEnv } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

interface DeliveryJson {
  id: string;
  event_id: string;
  state: string;
  next_attempt_at: string | null;
  created_at: string;
}
interface CircuitJson {
  state: string;
  open_until: string | null;
  reason: string | null;
}

/**
 * The dashboard's logs as working tools (issue 28, decision 41): where each delivery stands and
 * why, a failing destination's circuit, an attempt's request and answer, test events, and
 * filters and paging through everything the API holds. A server whose retries wait an hour or more
 * and whose circuits open after two failures in a row, so that a delivery's next attempt and
 * an open circuit stay put while the page is read.
 */
describe("the dashboard's logs in a browser", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let browser: Browser;
  let owner: TestUser;
  let page: Page;
  const receivers: Receiver[] = [];

  const ui = () => `${fixture.server.url}/ui/`;
  const inWorkspace = (rest: string, workspaceId = fixture.owner.id) =>
    `/v1/workspaces/${workspaceId}${rest}`;
  const receiver = async (status: number, body?: string): Promise<Receiver> => {
    const started = await startReceiver({
      ca,
      respond: body === undefined ? always(status) : () => ({ status, body }),
    });
    receivers.push(started);
    return started;
  };
  const createDestination = async (
    target: Receiver,
    path: string,
    client: ApiClient = api,
    workspaceId = fixture.owner.id,
  ): Promise<{ id: string; url: string; secret: string }> => {
    const created = await client.post<{ id: string; url: string; secret: string }>(
      inWorkspace("/webhooks", workspaceId),
      { url: `https://hooks.test:${target.port}/${path}` },
    );
    assert.equal(created.status, 201, created.text);
    return created.body;
  };
  const publish = async (
    object: string,
    type = "job.completed",
    client: ApiClient = api,
    workspaceId = fixture.owner.id,
  ): Promise<string> => {
    const response = await client.post<{ id: string }>(inWorkspace("/events", workspaceId), {
      type,
      data: { object: { id: object } },
    });
    assert.equal(response.status, 202, response.text);
    return response.body.id;
  };
  /** The log's row of `eventId`'s delivery. */
  const rowOf = (eventId: string) => page.locator(`tr[data-delivery^="dlv_${eventId.slice(4)}_"]`);

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture({
      ...deliveryEnv(ca),
      SVC_RETRY_SCHEDULE: "1h,2h,4h",
      SVC_CIRCUIT_THRESHOLD: "2",
      // Every receiver here answers at once. With an hour between attempts, an attempt that a
      // loaded machine let run past deliveryEnv's 1 s (a suite beside a browser) would hold
      // its delivery, and after two its destination's circuit, past the test's end.
      SVC_DELIVERY_TIMEOUT: "10s",
      SVC_DELIVERY_LEASE: "30s",
    });
    api = apiClient(fixture.server.url, fixture.owner.key);
    owner = await createUser(fixture.server, fixture.owner.id, "owner");
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
  });
  after(async () => {
    await browser.close();
    await Promise.all(receivers.map((each) => each.close()));
    await fixture.dispose();
  });

  it("an empty workspace says what to do next: create a destination, here or with the CLI", async () => {
    await page.goto(ui());
    await page.getByLabel("E-mail").fill(owner.email);
    await page.getByLabel("Password").fill(owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "No destinations yet" }).waitFor();
    await page.getByText(`svc webhooks create --workspace ${fixture.owner.id}`).waitFor();
    await page.getByRole("button", { name: "Create destination" }).waitFor();
    await screenshot(page, "20-empty-workspace");
  });

  it("a failing destination's page states its circuit and the reason; a delivery's row states its next attempt", async () => {
    const failing = await receiver(503, "down for maintenance");
    const destination = await createDestination(failing, "failing");
    const first = await publish("job_first");
    await publish("job_second");
    const circuit = await eventually(
      async () => {
        const got = await api.get<{ circuit: CircuitJson }>(
          inWorkspace(`/webhooks/${destination.id}`),
        );
        return got.body.circuit.state === "open" ? got.body.circuit : undefined;
      },
      { what: "the circuit to open" },
    );
    assert.ok(circuit.reason !== null && circuit.open_until !== null);

    await page.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${destination.id}`);
    const alert = page.getByRole("note", { name: "Circuit open" });
    await alert.getByText("its circuit is open until").waitFor();
    await alert.getByText(`It opened because ${circuit.reason}.`).waitFor();
    assert.equal(
      await alert.locator("time").getAttribute("datetime"),
      circuit.open_until,
      "until the API's open_until",
    );
    const facts = page.getByTestId("circuit");
    await facts.getByText("Open", { exact: true }).waitFor();
    await facts.getByText(`Opened because ${circuit.reason}`).waitFor();

    // The first delivery waits an hour for its retry: its row says so, and when.
    const delivery = await eventually(
      async () => {
        const got = await api.get<{ data: DeliveryJson[] }>(
          inWorkspace(`/deliveries?event=${first}`),
        );
        const found = got.body.data[0];
        return found?.next_attempt_at != null ? found : undefined;
      },
      { what: "the first delivery's next attempt" },
    );
    assert.ok(delivery.next_attempt_at !== null);
    const row = rowOf(first);
    const next = row.locator('td[data-label="Next attempt"] time');
    await next.waitFor();
    assert.equal(await next.getAttribute("datetime"), delivery.next_attempt_at);
    assert.match((await next.textContent()) ?? "", /^in \d+ minutes?$|^in 1 hour$/);
    assert.equal(await next.getAttribute("tabindex"), "0", "reachable by keyboard");
    assert.match((await next.getAttribute("title")) ?? "", /\d/, "the absolute time on hover");
    const status = row.locator('td[data-label="Status"]');
    assert.match(
      (await status.textContent()) ?? "",
      /^(Retry scheduled|Held: circuit open)/,
      `a state for ${delivery.state}`,
    );
    await row.getByText("last error: ").waitFor();
    await row.locator('td[data-label="Last answer"]').getByText("503").waitFor();
    await screenshot(page, "21-destination-circuit-open");

    // Where it stands on its own page, with the attempt's request and answer.
    await row.getByRole("link", { name: /^Attempts of dlv_/ }).click();
    await page.getByRole("heading", { name: "Attempts", level: 2 }).waitFor();
    const answer = page.getByRole("region", { name: "Answer of attempt 1" });
    await answer.getByText("HTTP 503").waitFor();
    assert.equal(await answer.locator("pre").textContent(), "down for maintenance");
    const found: string[] = (await seriousViolations(page)).map((each) => `delivery: ${each}`);
    await screenshot(page, "22-delivery-failing-attempt");
    await page.goBack();
    await page.locator("table.log").waitFor();
    found.push(...(await seriousViolations(page)).map((each) => `destination: ${each}`));
    assert.deepEqual(found, []);
  });

  it("the attempt view shows the request as sent, its signature among the headers, and the answer", async () => {
    const target = await receiver(200, "thanks");
    const destination = await createDestination(target, "attempts");
    const eventId = await publish("job_request");
    const [received] = await target.waitForRequests(1);
    assert.ok(received);
    await page.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${destination.id}`);
    const row = rowOf(eventId);
    await row.locator(".badge.delivered").waitFor({ timeout: 20_000 });
    await row.getByRole("link", { name: /^Attempts of dlv_/ }).click();

    const request = page.getByRole("region", { name: "Request of attempt 1" });
    await request.getByText(destination.url).waitFor();
    const header = async (name: string) =>
      request
        .getByRole("row", { name: new RegExp(`^${name} `) })
        .locator("td")
        .textContent();
    await request.getByRole("table").waitFor();
    assert.equal(await header("Webhook-Signature"), received.headers["webhook-signature"]);
    assert.equal(await header("Webhook-Id"), eventId);
    assert.equal(await header("Content-Type"), "application/json");
    // The body is fetched with the event, after the attempt: wait until it is shown.
    const body = request.locator("pre.request-body");
    await body.filter({ hasNotText: "Loading…" }).waitFor();
    assert.equal(
      await body.textContent(),
      received.bodyText,
      "the body, byte for byte as the receiver got it",
    );
    const answer = page.getByRole("region", { name: "Answer of attempt 1" });
    await answer.getByText("HTTP 200").waitFor();
    assert.equal(await answer.locator("pre").textContent(), "thanks");
    assert.equal((await page.content()).includes(destination.secret), false, "never the secret");
    await screenshot(page, "23-delivery-request-and-answer");
  });

  it("sends a test event from a destination's page: it reaches the receiver and shows in the log as a test", async () => {
    const target = await receiver(200);
    const destination = await createDestination(target, "test-events");
    await page.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${destination.id}`);
    await page.getByLabel("Test event of type").selectOption("job.failed");
    await page.getByRole("button", { name: "Send test event" }).click();
    const sent = page.locator("form.send-test").getByRole("status");
    await sent.getByText("Test event sent:").waitFor();
    const eventId = (await sent.getByRole("link").textContent()) ?? "";
    assert.match(eventId, /^evt_/);

    const [arrived] = await target.waitForRequests(1);
    assert.equal(arrived?.headers["webhook-id"], eventId);
    assert.equal((JSON.parse(arrived.bodyText) as { type: string }).type, "job.failed");
    const row = rowOf(eventId);
    await row.locator(".badge.delivered").waitFor({ timeout: 20_000 });
    await row.locator(".badge.test").waitFor();
    await screenshot(page, "24-test-event-sent");
    // The delivery says it is a test, not the page's memory of what it sent: after a reload too.
    await page.reload();
    await rowOf(eventId).locator(".badge.delivered").waitFor();
    await rowOf(eventId).locator(".badge.test").waitFor();
    await rowOf(eventId)
      .getByRole("link", { name: /^Attempts of dlv_/ })
      .click();
    await page.getByRole("heading", { name: /^Delivery of evt_\S+ test$/ }).waitFor();
    await page.goBack();

    await page.goto(`${ui()}#/w/${fixture.owner.id}/events`);
    const eventRow = page.getByRole("row", { name: new RegExp(eventId) });
    await eventRow.locator(".badge.test").waitFor();
    await eventRow.getByRole("link", { name: eventId }).click();
    await page.getByRole("heading", { name: /test/ }).waitFor();
    await page
      .getByRole("table", { name: `Deliveries of ${eventId}` })
      .getByRole("link", { name: destination.url })
      .waitFor();
  });

  it("a delivery held by an open circuit offers Retry now, which sends it at once; a delivered one offers Resend", async () => {
    const target = await receiver(503);
    const destination = await createDestination(target, "held");
    await publish("job_held_1");
    await publish("job_held_2");
    await eventually(
      async () => {
        const got = await api.get<{ circuit: CircuitJson }>(
          inWorkspace(`/webhooks/${destination.id}`),
        );
        return got.body.circuit.state === "open" ? true : undefined;
      },
      { what: "the circuit to open" },
    );
    // Published while the circuit is open: held until it ends, an hour from now.
    const heldId = await publish("job_held_3");
    const held = await eventually(
      async () => {
        const got = await api.get<{ data: DeliveryJson[] }>(
          inWorkspace(`/deliveries?event=${heldId}`),
        );
        return got.body.data[0]?.state === "circuit_open" ? got.body.data[0] : undefined;
      },
      { what: "the third delivery to be held by the circuit" },
    );
    assert.ok(held.next_attempt_at !== null);
    assert.ok(Date.parse(held.next_attempt_at) > Date.now() + 30 * 60_000, "held for long");
    target.setResponder(always(200));
    const arrivals = (count: number) =>
      eventually(
        () => {
          const got = target.requests.filter((request) => request.headers["webhook-id"] === heldId);
          return Promise.resolve(got.length >= count ? got : undefined);
        },
        { what: `${count} request(s) of ${heldId} at the receiver` },
      );

    await page.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${destination.id}`);
    const row = rowOf(heldId);
    await row.getByText("Held: circuit open").waitFor();
    await row.getByRole("button", { name: "Retry now" }).click();
    await row.getByRole("status").getByText("Retry queued: due now.").waitFor();
    await screenshot(page, "27-held-delivery-retried-now");
    // Never attempted before, and held for an hour: any arrival now is the retry's.
    await arrivals(1);
    await row.locator(".badge.delivered").waitFor({ timeout: 20_000 });

    // Delivered: the API sends it again on request, as Stripe's and Svix's Resend.
    await row.getByRole("button", { name: "Resend" }).click();
    await row.getByRole("status").getByText("Resend queued.").waitFor();
    await arrivals(2);
  });

  it("filters kept in the URL and Load more reach the oldest of 200 events and of 200 deliveries", async () => {
    // A workspace of its own, so that the counts are exactly those seeded here.
    const seeded: Workspace = await createWorkspace(fixture.server);
    await createUser(fixture.server, seeded.id, "owner", owner.email);
    const client = apiClient(fixture.server.url, seeded.key);
    const target = await receiver(200);
    await createDestination(target, "many", client, seeded.id);
    const ids: string[] = [];
    for (let index = 0; index < 200; index += 1) {
      // One in four a job.failed, for the type filter: 50 of them.
      const type = index % 4 === 0 ? "job.failed" : "job.completed";
      ids.push(await publish(`job_${index}`, type, client, seeded.id));
    }
    const [oldest] = ids;
    assert.ok(oldest);
    await target.waitForRequests(200);

    // The events: two pages of 100, then all of them.
    await page.goto(`${ui()}#/w/${seeded.id}/events`);
    await page.reload(); // the page learns of the new membership when it asks who is signed in
    const eventRows = page.locator("table.list tbody tr");
    await page.getByText("100 events shown, more to load").waitFor();
    assert.equal(await eventRows.count(), 100);
    assert.equal(await page.getByRole("link", { name: oldest }).count(), 0);
    await page.getByRole("button", { name: "Load more" }).click();
    await page.getByText("All 200 events shown").waitFor();
    assert.equal(await eventRows.count(), 200);
    await page.getByRole("link", { name: oldest }).waitFor();
    assert.equal(await page.getByRole("button", { name: "Load more" }).count(), 0);

    // By type, in the URL, and still so after a reload.
    await page.getByLabel("Type").selectOption("job.failed");
    await page.waitForURL(/events\?type=job\.failed$/);
    await page.getByText("All 50 events shown").waitFor();
    await page.reload();
    await page.getByText("All 50 events shown").waitFor();
    assert.equal(await page.getByLabel("Type").inputValue(), "job.failed");
    await page.getByRole("link", { name: oldest }).waitFor();
    await screenshot(page, "25-events-filtered");

    // The deliveries: the same, by status and by a time range that ends at the oldest.
    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    const deliveryRows = page.locator("table.log tbody tr");
    await page.getByText("100 deliveries shown, more to load").waitFor();
    await page.getByRole("button", { name: "Load more" }).click();
    await page.getByText("All 200 deliveries shown").waitFor();
    assert.equal(await deliveryRows.count(), 200);
    await rowOf(oldest).waitFor();

    await page.getByLabel("Status").selectOption("delivered");
    await page.waitForURL(/deliveries\?status=delivered$/);
    await page.getByText("100 deliveries shown, more to load").waitFor();
    await page.getByRole("button", { name: "Load more" }).click();
    await page.getByText("All 200 deliveries shown").waitFor();
    await page.getByLabel("Status").selectOption("failed");
    await page.getByText("No deliveries match these filters.").waitFor();

    const oldestDelivery = await client.get<{ data: DeliveryJson[] }>(
      inWorkspace(`/deliveries?event=${oldest}`, seeded.id),
    );
    const createdAt = oldestDelivery.body.data[0]?.created_at;
    assert.ok(createdAt !== undefined);
    const until = new Date(Date.parse(createdAt) + 1).toISOString();
    await page.goto(`${ui()}#/w/${seeded.id}/deliveries?until=${encodeURIComponent(until)}`);
    await rowOf(oldest).waitFor();
    assert.equal(await page.getByLabel("Time").inputValue(), "custom");
    assert.notEqual(await page.getByLabel("Until").inputValue(), "");
    const shown = await deliveryRows.count();
    assert.ok(shown >= 1 && shown < 200, `the range ends at the oldest (${shown} shown)`);
    await screenshot(page, "26-deliveries-filtered");
    assert.deepEqual(await seriousViolations(page), []);

    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(`${ui()}#/w/${seeded.id}/deliveries?status=delivered`);
    await page.getByText("100 deliveries shown, more to load").waitFor();
    const overflow = await page.evaluate<number>(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    assert.ok(overflow <= 0, `the deliveries page fits 375 px (${overflow}px over)`);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
