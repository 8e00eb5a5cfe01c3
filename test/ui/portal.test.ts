import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { BrowserContext, Frame, Page } from "playwright-core";
import { apiClient, type ApiClient } from "../support/api.ts";
import { launchProfile, screenshot, seriousViolations } from "../support/browser.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { operatorKeyOf, serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { sharedTestCa, type TestCa } from "../support/tls.ts";

/**
 * A site of its own (`http://localhost:<port>`): one page that frames `src`, whatever the test
 * sets it to. `localhost` and `127.0.0.1` are different sites to a browser, so the portal
 * (served from 127.0.0.1) is a third party in it.
 */
interface HostSite {
  readonly origin: string;
  src: string;
  close(): Promise<void>;
}

async function hostSite(title: string): Promise<HostSite> {
  const site = { src: "about:blank" };
  const server: Server = createServer((_request, response) => {
    response.setHeader("content-type", "text/html; charset=utf-8");
    response.end(
      `<!doctype html><html lang="en"><head><title>${title}</title></head><body>` +
        `<h1>${title}</h1><iframe id="portal" title="Webhooks portal" src="${site.src}" ` +
        `allow="clipboard-write" width="1200" height="760"></iframe></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(site, {
    origin: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      }),
  });
}

/** What the page holds in web storage, or "denied" where it may hold none. */
const webStorage = `(() => {
  try {
    return JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)]);
  } catch {
    return "denied";
  }
})()`;

/**
 * The customer portal in a browser (issue 29, decision 43): a real `svc server`, a platform's
 * site on `localhost` that frames it from `127.0.0.1`, a Chromium profile that blocks
 * third-party cookies, HTTPS receivers on loopback.
 */
describe("the customer portal, embedded", () => {
  let ca: TestCa;
  let platform: HostSite;
  let stranger: HostSite;
  let fixture: ServerFixture;
  let operator: ApiClient;
  let owner: ApiClient;
  let other: Workspace;
  let profile: { context: BrowserContext; close: () => Promise<void> };
  const receivers: Receiver[] = [];

  const link = async (body: { role: string; expires_in?: number }, workspace?: string) => {
    const made = await operator.post<{ url: string; expires_at: string }>(
      `/v1/workspaces/${workspace ?? fixture.owner.id}/portal-links`,
      body,
    );
    assert.equal(made.status, 201, made.text);
    return made.body;
  };
  /** The platform's page, framing `url`; the portal's frame once its page has loaded. */
  const embed = async (
    site: HostSite,
    url: string,
    beforeOpening: (page: Page) => void = () => undefined,
  ): Promise<{ page: Page; frame: Frame }> => {
    site.src = url;
    const page = await profile.context.newPage();
    beforeOpening(page);
    await page.goto(`${site.origin}/`);
    const element = await page.waitForSelector("iframe#portal");
    const frame = await element.contentFrame();
    assert.ok(frame);
    await frame.waitForLoadState();
    return { page, frame };
  };

  before(async () => {
    ca = await sharedTestCa();
    [platform, stranger] = await Promise.all([hostSite("Acme Cloud"), hostSite("Elsewhere")]);
    fixture = await serverFixture({
      ...deliveryEnv(ca),
      SVC_PORTAL_FRAME_ANCESTORS: platform.origin,
      SVC_PORTAL_PRODUCT_NAME: "Acme Cloud",
    });
    operator = apiClient(fixture.server.url, await operatorKeyOf(fixture, "portal:write"));
    owner = apiClient(fixture.server.url, fixture.owner.key);
    other = await createWorkspace(fixture.server);
    await apiClient(fixture.server.url, other.key).post(`/v1/workspaces/${other.id}/webhooks`, {
      url: "https://hooks.test:9/other-customer",
    });
    profile = await launchProfile({ blockThirdPartyCookies: true });
  });
  after(async () => {
    await profile.close();
    await Promise.all(receivers.map((each) => each.close()));
    await fixture.dispose();
    await Promise.all([platform.close(), stranger.close()]);
  });

  it("this browser blocks third-party cookies: a cookie set in the portal's frame is not stored, where the same profile allowing them stores it", async () => {
    const probe = "document.cookie = 'probe=1; SameSite=None; Secure; Path=/'; document.cookie";
    const { page, frame } = await embed(platform, (await link({ role: "viewer" })).url);
    assert.equal(await frame.evaluate(probe), "", "the frame cannot keep a cookie");
    const stored = await profile.context.cookies(fixture.server.url);
    assert.deepEqual(stored, []);
    await page.close();

    const allowing = await launchProfile({ blockThirdPartyCookies: false });
    try {
      platform.src = `${fixture.server.url}/ui/portal`;
      const control = await allowing.context.newPage();
      await control.goto(`${platform.origin}/`);
      const controlFrame = await (await control.waitForSelector("iframe#portal")).contentFrame();
      assert.ok(controlFrame);
      await controlFrame.waitForLoadState();
      assert.equal(await controlFrame.evaluate(probe), "probe=1", "the probe is a real test");
    } finally {
      await allowing.close();
    }
  });

  it("the customer sees its workspace alone, creates a destination (its secret once), sees a delivery arrive and retries it", async () => {
    const target = await startReceiver({ ca, respond: always(200) });
    receivers.push(target);
    const made = await link({ role: "member" });
    const { page, frame } = await embed(platform, made.url);
    const sent: { url: string; headers: Record<string, string> }[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/v1/")) {
        sent.push({ url: request.url(), headers: request.headers() });
      }
    });
    await frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    assert.equal(new URL(frame.url()).hash, "", "the token left the frame's address at once");
    await frame.getByText("Acme Cloud", { exact: true }).waitFor();
    await frame
      .getByTestId("session-ends")
      .getByText(/\(in (59|60) minutes\)/)
      .waitFor();
    assert.equal(await frame.locator("select#workspace").count(), 0, "no workspace switcher");
    await screenshot(page, "portal-embedded");

    await frame.getByLabel("URL").fill(`https://hooks.test:${target.port}/portal`);
    await frame.getByRole("button", { name: "Create destination" }).click();
    const secretBox = frame.getByTestId("secret");
    await secretBox.waitFor();
    const secret = (await secretBox.textContent()) ?? "";
    assert.match(secret, /^whsec_/);
    await screenshot(page, "portal-secret-once");
    await frame.getByRole("button", { name: "I have saved it" }).click();
    await secretBox.waitFor({ state: "detached" });
    assert.equal((await frame.content()).includes(secret), false, "the secret left the page");

    const published = await owner.post<{ id: string }>(
      `/v1/workspaces/${fixture.owner.id}/events`,
      { type: "job.completed", data: { object: { id: "job_portal" } } },
    );
    assert.equal(published.status, 202, published.text);
    const [delivered] = await target.waitForRequests(1);
    assert.ok(delivered);
    verifiedTimestamp(delivered, secret);
    await frame.getByRole("link", { name: /hooks\.test/ }).click();
    const row = frame.locator(
      `tr[data-delivery^="dlv_${published.body.id.slice(4)}"][data-status="delivered"]`,
    );
    await row.waitFor({ timeout: 20_000 });
    await row.getByRole("button", { name: "Resend" }).click();
    await row.getByRole("status").getByText("Resend queued.").waitFor();
    const [, again] = await target.waitForRequests(2);
    assert.ok(again);
    assert.equal(again.headers["webhook-id"], published.body.id, "the same notification");
    verifiedTimestamp(again, secret);
    await screenshot(page, "portal-delivery-retried");

    assert.ok(sent.length > 0);
    for (const request of sent) {
      if (request.url.endsWith("/v1/auth/portal-sessions")) continue;
      assert.match(request.headers.authorization ?? "", /^Bearer svp_/, request.url);
    }
    for (const request of sent) {
      assert.equal(request.headers.cookie, undefined, `no cookie on ${request.url}`);
      assert.equal(request.url.includes("spl_"), false, "no link token in a URL");
      assert.equal(request.headers.referer ?? "", "", `no Referer on ${request.url}`);
    }
    // A frame of another site has no web storage where third-party cookies are blocked; the
    // page, which must not use it anyway, works without (checked at the top level below).
    assert.equal(await frame.evaluate(webStorage), "denied");
    const html = await frame.content();
    assert.equal(html.includes("svp_") || html.includes("spl_"), false, "no token in the page");
    await page.close();
  });

  it("a portal session reads no other workspace through /v1, and the page shows its own alone", async () => {
    const made = await link({ role: "member" });
    let opened: Promise<{ token: string }> | undefined;
    const { page, frame } = await embed(platform, made.url, (page) => {
      opened = page
        .waitForResponse((response) => response.url().endsWith("/v1/auth/portal-sessions"))
        .then((response) => response.json() as Promise<{ token: string }>);
    });
    assert.ok(opened);
    const { token } = await opened;
    await frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    const answer = await frame.evaluate(
      async ([path, bearer]) => {
        const response = await fetch(path, { headers: { authorization: `Bearer ${bearer}` } });
        return { status: response.status, body: await response.text() };
      },
      [`/v1/workspaces/${other.id}/webhooks`, token] as const,
    );
    assert.equal(answer.status, 403);
    const refusal = JSON.parse(answer.body) as { error: { code: string } };
    assert.equal(refusal.error.code, "workspace_forbidden");
    assert.equal(answer.body.includes("other-customer"), false);
    await frame.evaluate(`window.location.hash = "#/w/${other.id}/destinations"`);
    await frame.getByText("This portal shows one workspace only.").waitFor();
    await page.close();
  });

  it("a page of an origin not listed cannot frame the portal, and the dashboard is framed by nobody", async () => {
    const made = await link({ role: "viewer" });
    const refusals: string[] = [];
    const { page, frame } = await (async () => {
      stranger.src = made.url;
      const strangerPage = await profile.context.newPage();
      strangerPage.on("console", (message) => refusals.push(message.text()));
      await strangerPage.goto(`${stranger.origin}/`);
      const element = await strangerPage.waitForSelector("iframe#portal");
      const strangerFrame = await element.contentFrame();
      assert.ok(strangerFrame);
      await strangerFrame.waitForLoadState();
      return { page: strangerPage, frame: strangerFrame };
    })();
    assert.equal(await frame.locator("#app").count(), 0, "nothing of the portal is shown");
    assert.ok(
      refusals.some((text) => /frame-ancestors/.test(text)),
      `the browser says why: ${refusals.join(" | ")}`,
    );
    await screenshot(page, "portal-refused-elsewhere");
    await page.close();
    // The refused frame ran nothing of the page: its link is still unused, and opens here.
    const listed = await embed(platform, made.url);
    await listed.frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await listed.page.close();

    const dashboard = await embed(platform, `${fixture.server.url}/ui/`);
    assert.equal(await dashboard.frame.locator("#app").count(), 0, "the dashboard is not framed");
    await dashboard.page.close();
  });

  it("a used link and an expired link each show the dead-link page", async () => {
    const made = await link({ role: "viewer" });
    const first = await embed(platform, made.url);
    await first.frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await first.page.close();
    const used = await embed(platform, made.url);
    await used.frame.getByRole("heading", { name: "This portal link no longer works" }).waitFor();
    await screenshot(used.page, "portal-dead-link");
    await used.page.close();

    const short = await link({ role: "viewer", expires_in: 1 });
    // The link's own deadline, not a guess: it is dead once the server's clock has passed it.
    await new Promise((resolve) =>
      setTimeout(resolve, Date.parse(short.expires_at) - Date.now() + 50),
    );
    const expired = await embed(platform, short.url);
    await expired.frame
      .getByRole("heading", { name: "This portal link no longer works" })
      .waitFor();
    assert.equal(await expired.frame.getByRole("heading", { name: "Destinations" }).count(), 0);
    await expired.page.close();
  });

  it("the platform ends the workspace's portal sessions, and the open page says the session has ended", async () => {
    const { page, frame } = await embed(platform, (await link({ role: "viewer" })).url);
    await frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await frame.getByRole("link", { name: "Deliveries", exact: true }).click();
    const ended = await operator.delete<{ ended: number }>(
      `/v1/workspaces/${fixture.owner.id}/portal-sessions`,
    );
    assert.equal(ended.status, 200, ended.text);
    assert.ok(ended.body.ended >= 1);
    // The delivery log reads again every 2 s; its first 401 ends the page's session.
    await frame.getByRole("heading", { name: "Your session has ended" }).waitFor();
    await screenshot(page, "portal-session-ended");
    await page.close();
  });

  it("a viewer sees no controls that change anything; End session ends it", async () => {
    const { page, frame } = await embed(platform, (await link({ role: "viewer" })).url);
    await frame.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    assert.equal(await frame.getByRole("button", { name: "Create destination" }).count(), 0);
    await frame.getByText("(viewer)").waitFor();
    await frame.getByRole("button", { name: "End session" }).click();
    await frame.getByRole("heading", { name: "Your session has ended" }).waitFor();
    await page.close();
  });

  it("takes its theming from the link: a product name, an accent colour, dark; what is not valid is ignored", async () => {
    const made = await link({ role: "member" });
    const themed = `${made.url}&theme=dark&accent=%23c2410c&name=Acme%20Hooks&accent=red;background:url(x)`;
    const page = await profile.context.newPage();
    await page.goto(themed);
    await page.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await page.getByText("Acme Hooks", { exact: true }).waitFor();
    const theme = await page.evaluate(`({
      theme: document.documentElement.dataset.theme,
      accent: getComputedStyle(document.documentElement).getPropertyValue("--accent").trim(),
      title: document.title,
      background: getComputedStyle(document.documentElement).backgroundColor,
    })`);
    assert.deepEqual(theme, {
      theme: "dark",
      accent: "#ce673d", // #c2410c lightened just enough to read on the dark background
      title: "Acme Hooks",
      background: "rgb(21, 25, 30)",
    });
    assert.equal(new URL(page.url()).hash, "");
    assert.equal(await page.evaluate(webStorage), "[[],[]]", "nothing in web storage");
    assert.deepEqual(await seriousViolations(page), []);
    await screenshot(page, "portal-dark-themed");
    await page.close();
  });
});
