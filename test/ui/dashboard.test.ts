import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { apiClient, type ApiClient } from "../support/api.ts";
import { createUser, type TestUser } from "../support/auth.ts";
import { launchBrowser, screenshot, seriousViolations } from "../support/browser.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/** An answer a receiver controls, meant to run as script if the page ever rendered it as HTML. */
const xssAnswer = `<img src=x onerror="window.__xss='img'"><script>window.__xss='script'</script>`;

/**
 * The dashboard end to end (issue 21, decision 35): a real `svc server` process with a delivery
 * worker, HTTPS receivers on loopback, users made with `svc admin users create`, and Debian's
 * Chromium. One browser for the file, a context (its own cookies) per user.
 */
describe("the dashboard in a browser", () => {
  let ca: TestCa;
  let fixture: ServerFixture;
  let api: ApiClient;
  let browser: Browser;
  let owner: TestUser;
  let viewer: TestUser;
  let other: Workspace;
  let ownerPage: Page;
  const contexts: BrowserContext[] = [];
  const receivers: Receiver[] = [];
  const servers: Server[] = [];

  const ui = () => `${fixture.server.url}/ui/`;
  const workspacePath = (rest: string) => `/v1/workspaces/${fixture.owner.id}${rest}`;
  const receiver = async (status: number, body?: string): Promise<Receiver> => {
    const started = await startReceiver({
      ca,
      respond: body === undefined ? always(status) : () => ({ status, body }),
    });
    receivers.push(started);
    return started;
  };
  const newPage = async (): Promise<Page> => {
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1200, height: 800 },
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on("dialog", (dialog) => {
      void dialog.dismiss();
    });
    return page;
  };
  const signIn = async (page: Page, user: TestUser): Promise<void> => {
    await page.goto(ui());
    await page.getByLabel("E-mail").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
  };
  const publish = async (id: string): Promise<string> => {
    const response = await api.post<{ id: string }>(workspacePath("/events"), {
      type: "job.completed",
      data: { object: { id } },
    });
    assert.equal(response.status, 202, response.text);
    return response.body.id;
  };
  /** The row of `eventId`'s delivery in the page's log, once its status is `status`. */
  const deliveryItem = async (page: Page, eventId: string, status: string) => {
    const item = page.locator(`tr[data-delivery^="dlv_${eventId.slice(4)}"]`);
    await page
      .locator(`tr[data-delivery^="dlv_${eventId.slice(4)}"][data-status="${status}"]`)
      .waitFor({ timeout: 20_000 });
    return item;
  };
  /** From a delivery's row to its page of attempts. */
  const openAttempts = async (page: Page, item: ReturnType<Page["locator"]>) => {
    await item.getByRole("link", { name: /^Attempts of dlv_/ }).click();
    await page.getByRole("heading", { name: "Attempts", level: 2 }).waitFor();
  };

  before(async () => {
    ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    api = apiClient(fixture.server.url, fixture.owner.key);
    [owner, viewer] = await Promise.all([
      createUser(fixture.server, fixture.owner.id, "owner"),
      createUser(fixture.server, fixture.owner.id, "viewer"),
    ]);
    // The owner is also a viewer of a second workspace, to switch to.
    other = await createWorkspace(fixture.server);
    await createUser(fixture.server, other.id, "viewer", owner.email);
    browser = await launchBrowser();
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await browser.close();
    for (const server of servers) {
      await new Promise((resolve) => server.close(resolve));
    }
    await Promise.all(receivers.map((each) => each.close()));
    await fixture.dispose();
  });

  it("signs in with a user's e-mail and password; a wrong password is told, not signed in", async () => {
    ownerPage = await newPage();
    await ownerPage.goto(ui());
    await ownerPage.getByRole("heading", { name: "Sign in to svc" }).waitFor();
    await ownerPage.getByRole("heading", { name: "No account yet?" }).waitFor();
    await ownerPage.getByText("svc admin users create --email").waitFor();
    await screenshot(ownerPage, "01-sign-in");
    await ownerPage.getByLabel("E-mail").fill(owner.email);
    await ownerPage.getByLabel("Password").fill("not the password at all");
    await ownerPage.getByRole("button", { name: "Sign in" }).click();
    await ownerPage.getByRole("alert").getByText("wrong").waitFor();
    await signIn(ownerPage, owner);
    const cookies = await ownerPage.context().cookies();
    const session = cookies.find((cookie) => cookie.name === "svc_session");
    assert.ok(session);
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");
    assert.equal(
      await ownerPage.evaluate("document.cookie"),
      "",
      "the page's scripts cannot read the session cookie",
    );
  });

  it("creates a destination and shows its secret once, with copy and download; dismissed, it is gone", async () => {
    const target = await receiver(200);
    await ownerPage.context().grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: fixture.server.url,
    });
    await ownerPage.getByLabel("URL").fill(`https://hooks.test:${target.port}/hooks`);
    await ownerPage.getByRole("button", { name: "Create destination" }).click();
    const secretBox = ownerPage.getByTestId("secret");
    await secretBox.waitFor();
    const secret = (await secretBox.textContent()) ?? "";
    assert.match(secret, /^whsec_/);
    await screenshot(ownerPage, "02-secret-shown-once");

    await ownerPage.getByRole("button", { name: "Copy" }).click();
    await ownerPage.getByText("Copied to the clipboard.").waitFor();
    assert.equal(await ownerPage.evaluate("navigator.clipboard.readText()"), secret);
    const [download] = await Promise.all([
      ownerPage.waitForEvent("download"),
      ownerPage.getByRole("button", { name: "Download" }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^dst_[0-9a-f]+\.secret$/);
    assert.equal(await readFile(await download.path(), "utf8"), `${secret}\n`);

    await ownerPage.getByRole("button", { name: "I have saved it" }).click();
    await secretBox.waitFor({ state: "detached" });
    assert.equal((await ownerPage.content()).includes(secret), false, "not in the DOM");
    const stored = await ownerPage.evaluate(
      "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])",
    );
    assert.equal(stored, "[[],[]]", "nothing in web storage");
    await ownerPage.getByRole("link", { name: /hooks\.test/ }).click();
    await ownerPage.getByRole("heading", { name: "Delivery log" }).waitFor();
    assert.equal((await ownerPage.content()).includes(secret), false, "nor on its own page");

    const eventId = await publish("job_secret");
    const [request] = await target.waitForRequests(1);
    assert.ok(request);
    verifiedTimestamp(request, secret);
    assert.equal(request.headers["webhook-id"], eventId);
  });

  it("a published event arrives in the destination's log, with each attempt's status, time and answer", async () => {
    const eventId = await publish("job_arrives");
    const item = await deliveryItem(ownerPage, eventId, "delivered");
    await ownerPage
      .getByRole("img", { name: /This destination: [1-9]\d* attempts? succeeded/ })
      .waitFor();
    await screenshot(ownerPage, "03-destination-delivered");
    await openAttempts(ownerPage, item);
    const attempt = ownerPage.locator("li.attempt").first();
    assert.equal(await attempt.locator("summary .badge").textContent(), "200");
    assert.equal(
      await attempt
        .getByRole("region", { name: /^Answer/ })
        .locator("pre.answer")
        .textContent(),
      "OK",
    );
    assert.ok(await attempt.locator("time").getAttribute("datetime"));
  });

  it("a failing receiver: its answer shown as text, never as HTML; the destination shows failing; Recover sends again", async () => {
    const failing = await receiver(503, xssAnswer);
    const created = await api.post<{ id: string; url: string }>(workspacePath("/webhooks"), {
      url: `https://hooks.test:${failing.port}/failing?<b>bold</b>`,
    });
    assert.equal(created.status, 201, created.text);
    const eventId = await publish("job_fails");
    await failing.waitForRequests(3);

    await ownerPage.goto(`${ui()}#/w/${fixture.owner.id}/destinations`);
    const row = ownerPage.locator("tr", { hasText: `hooks.test:${failing.port}` });
    await row.getByText("Failing", { exact: true }).waitFor({ timeout: 20_000 });
    assert.equal(await ownerPage.locator("a.url b").count(), 0, "the URL is text");
    await screenshot(ownerPage, "04-destinations-health");

    await row.getByRole("link").click();
    const item = await deliveryItem(ownerPage, eventId, "failed");
    await screenshot(ownerPage, "05-destination-failing");
    const destinationPage = ownerPage.url();
    await openAttempts(ownerPage, item);
    // Every attempt open, to read each answer.
    for (const summary of await ownerPage.locator("li.attempt summary").all()) {
      if ((await summary.locator("xpath=..").getAttribute("open")) === null) await summary.click();
    }
    const answers = ownerPage.locator('section[aria-label^="Answer"] pre.answer');
    await answers.nth(2).waitFor();
    assert.deepEqual(await answers.allTextContents(), [xssAnswer, xssAnswer, xssAnswer]);
    assert.equal(await ownerPage.locator("pre.answer img, pre.answer script").count(), 0);
    assert.equal(await ownerPage.evaluate("window.__xss"), undefined, "no script ran");
    await ownerPage.goto(destinationPage);

    failing.setResponder(always(200));
    await ownerPage.getByLabel("Send again the failed deliveries of").selectOption({
      label: "the last hour",
    });
    await ownerPage.getByRole("button", { name: "Recover" }).click();
    await ownerPage.getByText("Recovery queued 1 failed delivery.").waitFor();
    await deliveryItem(ownerPage, eventId, "delivered");
    assert.equal(failing.requests.length, 4);
    assert.equal(failing.requests[3]?.headers["webhook-id"], eventId);
    await ownerPage.locator(".facts .badge.healthy").waitFor();
    await screenshot(ownerPage, "06-destination-recovered");
    await openAttempts(ownerPage, item);
    const newest = ownerPage.locator("li.attempt").first();
    assert.equal(await newest.getAttribute("data-attempt"), "4", "newest first");
    assert.equal(
      await newest
        .getByRole("region", { name: /^Answer/ })
        .locator("pre.answer")
        .textContent(),
      "OK",
    );
  });

  it("retries one failed delivery from its row", async () => {
    const failing = await receiver(500);
    const created = await api.post<{ id: string }>(workspacePath("/webhooks"), {
      url: `https://hooks.test:${failing.port}/retry`,
    });
    const eventId = await publish("job_retry");
    await failing.waitForRequests(3);
    await ownerPage.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${created.body.id}`);
    const item = await deliveryItem(ownerPage, eventId, "failed");
    failing.setResponder(always(200));
    await item.getByRole("button", { name: "Retry" }).click();
    await item.getByRole("status").getByText("Retry queued.").waitFor();
    await deliveryItem(ownerPage, eventId, "delivered");
  });

  it("pauses, resumes and deletes a destination", async () => {
    const created = await api.post<{ id: string }>(workspacePath("/webhooks"), {
      url: "https://hooks.test:9/lifecycle",
    });
    await ownerPage.goto(`${ui()}#/w/${fixture.owner.id}/destinations/${created.body.id}`);
    await ownerPage.getByRole("button", { name: "Pause" }).click();
    await ownerPage.getByRole("button", { name: "Resume" }).waitFor();
    const paused = await api.get<{ active: boolean }>(
      workspacePath(`/webhooks/${created.body.id}`),
    );
    assert.equal(paused.body.active, false);
    await ownerPage.getByRole("button", { name: "Resume" }).click();
    await ownerPage.getByRole("button", { name: "Pause" }).waitFor();
    await ownerPage.getByRole("button", { name: "Delete", exact: true }).click();
    await ownerPage.getByRole("button", { name: "Delete for good" }).click();
    await ownerPage.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await ownerPage
      .getByRole("status")
      .getByText("Deleted https://hooks.test:9/lifecycle.")
      .waitFor();
    const gone = await api.get(workspacePath(`/webhooks/${created.body.id}`));
    assert.equal(gone.status, 404);
  });

  it("searches the event log by type and finds an event by its id; its data is shown as text", async () => {
    const eventId = await publish(xssAnswer);
    await ownerPage.getByRole("link", { name: "Events", exact: true }).click();
    await ownerPage.getByLabel("Type").selectOption("job.completed");
    await ownerPage.getByRole("link", { name: eventId }).waitFor();
    await screenshot(ownerPage, "07-events");
    await ownerPage.getByLabel("Event id").fill(eventId);
    await ownerPage.getByRole("button", { name: "Find" }).click();
    await ownerPage.getByRole("heading", { name: `Event ${eventId}` }).waitFor();
    await ownerPage.getByText(JSON.stringify(xssAnswer).slice(1, 20)).waitFor();
    assert.equal(await ownerPage.locator("pre.answer img, pre.answer script").count(), 0);
    assert.equal(await ownerPage.evaluate("window.__xss"), undefined, "no script ran");
    // Its deliveries name their destinations by URL, not by id.
    await ownerPage
      .getByRole("table", { name: `Deliveries of ${eventId}` })
      .getByRole("link", { name: /^https:\/\/hooks\.test:\d+\// })
      .first()
      .waitFor();
    assert.equal(await ownerPage.getByRole("link", { name: /^dst_/ }).count(), 0);
    await screenshot(ownerPage, "08-event");
  });

  it("switches workspace, and draws each with the user's role there", async () => {
    await ownerPage.goto(ui());
    await ownerPage.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await ownerPage.getByRole("button", { name: "Create destination" }).waitFor();
    await ownerPage.getByRole("combobox", { name: "Workspace" }).selectOption(other.id);
    await ownerPage.getByRole("heading", { name: "No destinations yet" }).waitFor();
    await ownerPage.getByText(`svc webhooks create --workspace ${other.id}`).waitFor();
    await ownerPage.getByText("(viewer)").waitFor();
    assert.equal(await ownerPage.getByRole("button", { name: "Create destination" }).count(), 0);
    assert.match(ownerPage.url(), new RegExp(`#/w/${other.id}/destinations$`));
    await ownerPage.getByRole("combobox", { name: "Workspace" }).selectOption(fixture.owner.id);
    await ownerPage.getByRole("button", { name: "Create destination" }).waitFor();
  });

  it("a viewer sees no control that would fail, and the API refuses the change when forced", async () => {
    const page = await newPage();
    await signIn(page, viewer);
    await page.getByRole("table").waitFor();
    assert.equal(await page.getByRole("button", { name: "Create destination" }).count(), 0);
    await page.getByRole("link", { name: /failing/ }).click();
    await page.locator("table.log tbody tr").first().waitFor();
    const buttons = await page.getByRole("button").allTextContents();
    assert.deepEqual([...new Set(buttons)].sort(), ["Sign out"], "only reading controls");
    await screenshot(page, "09-viewer");

    const forced = await page.evaluate<{ status: number; code: string }>(`
      fetch("/v1/auth/session").then((r) => r.json()).then((who) =>
        fetch("/v1/workspaces/${fixture.owner.id}/webhooks", {
          method: "POST",
          headers: { "content-type": "application/json", "x-csrf-token": who.csrf_token },
          body: JSON.stringify({ url: "https://hooks.test/forced" }),
        })
      ).then(async (r) => ({ status: r.status, code: (await r.json()).error.code }))
    `);
    assert.deepEqual(forced, { status: 403, code: "insufficient_scope" });
  });

  it("a page of another origin cannot change anything with the user's cookie (CSRF), and a forged cookie signs nobody in", async () => {
    const before = await api.get<{ data: unknown[] }>(workspacePath("/webhooks?limit=100"));
    const target = `${fixture.server.url}${workspacePath("/webhooks")}`;
    const attacker = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<!doctype html><title>attacker</title>
        <form id="f" method="POST" action="${target}" enctype="text/plain">
          <input name='{"url":"https://hooks.test/csrf","x":"' value='"}'>
        </form>
        <script>
          fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include",
            headers: { "content-type": "text/plain" }, body: '{"url":"https://hooks.test/csrf"}' })
            .finally(() => document.getElementById("f").submit());
        </script>`);
    });
    servers.push(attacker);
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    const { port } = attacker.address() as AddressInfo;
    const refused = ownerPage.waitForResponse(
      (response) => response.url() === target && response.request().resourceType() === "document",
    );
    await ownerPage.goto(`http://127.0.0.1:${port}/`);
    const answer = await refused;
    assert.equal(answer.status(), 403);
    assert.match(await answer.text(), /csrf_token_invalid/);
    const afterwards = await api.get<{ data: unknown[] }>(workspacePath("/webhooks?limit=100"));
    assert.equal(afterwards.body.data.length, before.body.data.length, "nothing was created");

    const forged = await newPage();
    await forged
      .context()
      .addCookies([{ name: "svc_session", value: "svs_forged", url: fixture.server.url }]);
    await forged.goto(ui());
    await forged.getByRole("heading", { name: "Sign in to svc" }).waitFor();
  });

  it("signing out ends the session: the sign-in form again, and the old cookie is refused", async () => {
    const page = await newPage();
    await signIn(page, owner);
    const [cookie] = (await page.context().cookies()).filter((each) => each.name === "svc_session");
    assert.ok(cookie);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to svc" }).waitFor();
    const left = (await page.context().cookies()).filter((each) => each.name === "svc_session");
    assert.deepEqual(left, [], "the cookie is cleared");
    const replayed = await fetch(new URL(workspacePath("/webhooks"), fixture.server.url), {
      headers: { cookie: `svc_session=${cookie.value}` },
    });
    assert.equal(replayed.status, 401, "the session is revoked, not only forgotten");
  });

  it("has no serious or critical accessibility violations (axe-core), and fits a narrow screen", async () => {
    const page = await newPage();
    await page.goto(ui());
    await page.getByRole("heading", { name: "Sign in to svc" }).waitFor();
    const found: string[] = (await seriousViolations(page)).map((each) => `sign-in: ${each}`);
    await signIn(page, owner);
    await page.getByRole("table").waitFor();
    found.push(...(await seriousViolations(page)).map((each) => `destinations: ${each}`));
    await page.getByRole("link", { name: /failing/ }).click();
    const item = page.locator("table.log tbody tr").first();
    await item.waitFor();
    found.push(...(await seriousViolations(page)).map((each) => `destination: ${each}`));
    await openAttempts(page, item);
    found.push(...(await seriousViolations(page)).map((each) => `delivery: ${each}`));
    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await page.locator("table.log").waitFor();
    found.push(...(await seriousViolations(page)).map((each) => `deliveries: ${each}`));
    await page.getByRole("link", { name: "Events", exact: true }).click();
    await page.getByRole("table").waitFor();
    found.push(...(await seriousViolations(page)).map((each) => `events: ${each}`));
    assert.deepEqual(found, []);

    await page.setViewportSize({ width: 375, height: 740 });
    /** How far the page is wider than the screen: it scrolls sideways when over 0. */
    const overflow = () =>
      page.evaluate<number>(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
    await page.locator('td[data-label="Id"] a').first().waitFor();
    assert.ok((await overflow()) <= 0, `the events page fits 375 px (${await overflow()}px over)`);
    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await page.locator('table.log td[data-label="Destination"] a').first().waitFor();
    assert.ok(
      (await overflow()) <= 0,
      `the deliveries page fits 375 px (${await overflow()}px over)`,
    );
    await screenshot(page, "11-narrow-deliveries");
    await page.getByRole("link", { name: "Destinations", exact: true }).click();
    await page.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await page.getByRole("table").waitFor();
    assert.ok(
      (await overflow()) <= 0,
      `the destinations page fits 375 px (${await overflow()}px over)`,
    );
    await screenshot(page, "10-narrow-destinations");

    await page.reload();
    await page.getByRole("table").waitFor();
    await page.keyboard.press("Tab");
    assert.equal(
      await page.evaluate("document.activeElement.textContent"),
      "Skip to content",
      "the first Tab reaches the skip link",
    );
  });
});
