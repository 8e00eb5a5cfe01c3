import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashToken } from "../../src/crypto/tokens.ts";
import { manualClock } from "../support/clock.ts";
import {
  inProcessApi,
  publicTestHost,
  signInAs,
  type InProcessApi,
} from "../support/in-process-api.ts";
import { memoryLogger } from "../support/memory-log.ts";
import { callAs, openPortal, operatorToken, portalLink, portalSession } from "../support/portal.ts";

/**
 * The customer portal's routes (issue 29, decision 43), in process on each engine: links made
 * by an operator key, opened once, sessions bound to one workspace and a role, ended together.
 */
describe("portal links and sessions", () => {
  const start = Date.parse("2026-11-25T12:00:00Z");
  const clock = manualClock(start);
  let api: InProcessApi;
  let operator: string;
  let otherWorkspace: string;

  before(async () => {
    api = await inProcessApi({ clock, settings: { publicUrl: "https://webhooks.example.com" } });
    operator = await operatorToken(api);
    otherWorkspace = "ws_other_customer";
    await api.store.credentials.createWorkspace({ id: otherWorkspace, name: "other customer" });
  });
  after(() => api.dispose());

  const inWorkspace = (rest: string, workspace = api.workspaceId) =>
    `/v1/workspaces/${workspace}${rest}`;

  it("makes a one-time URL to /ui/portal with the token in the fragment, never in the query, dying after portalLinkTtl", async () => {
    const link = await portalLink(api, operator, { role: "viewer" });
    const url = new URL(link.url);
    assert.equal(url.origin, "https://webhooks.example.com", "publicUrl");
    assert.equal(url.pathname, "/ui/portal");
    assert.equal(url.search, "", "nothing in the query");
    assert.match(link.token, /^spl_[A-Za-z0-9_-]{43}$/);
    assert.equal(Date.parse(link.expiresAt) - start, 5 * 60_000, "5 minutes by default");
    const rows = await api.store.portal.redeemLink({
      linkTokenHash: link.token,
      sessionTokenHash: "x",
      sessionExpiresAt: new Date(start + 1000),
    });
    assert.equal(rows, null, "the token itself is not what is stored (its hash is)");
  });

  it("takes expires_in up to an hour, and refuses more, or a role that is not viewer or member", async () => {
    const link = await portalLink(api, operator, { role: "member", expires_in: 3600 });
    assert.equal(Date.parse(link.expiresAt) - start, 3_600_000);
    for (const body of [
      { role: "member", expires_in: 3601 },
      { role: "member", expires_in: 0 },
      { role: "owner" },
      {},
    ]) {
      const refused = await callAs(api, operator, "POST", inWorkspace("/portal-links"), { body });
      assert.equal(refused.statusCode, 400, JSON.stringify(body));
      assert.equal(refused.json<{ error: { code: string } }>().error.code, "invalid_request");
    }
  });

  it("opens once: a session of the link's workspace and role; the second opening is 401 portal_link_invalid", async () => {
    const link = await portalLink(api, operator, { role: "member" });
    const opened = await openPortal(api, link.token);
    assert.equal(opened.statusCode, 201, opened.body);
    const session = opened.json<{
      token: string;
      expires_at: string;
      workspace: { id: string; role: string; scopes: string[] };
    }>();
    assert.match(session.token, /^svp_[A-Za-z0-9_-]{43}$/);
    assert.equal(Date.parse(session.expires_at) - start, 3_600_000, "portalSessionTtl, 1h");
    assert.deepEqual(session.workspace, {
      id: api.workspaceId,
      name: "in process",
      role: "member",
      scopes: ["webhooks:read", "webhooks:write", "events:read", "events:write"],
    });
    const again = await openPortal(api, link.token);
    assert.equal(again.statusCode, 401);
    assert.equal(again.json<{ error: { code: string } }>().error.code, "portal_link_invalid");
    const unknown = await openPortal(api, "spl_not_a_link_at_all");
    assert.equal(unknown.json<{ error: { code: string } }>().error.code, "portal_link_invalid");
  });

  it("of ten openings of one link at once, exactly one gets a session", async () => {
    const link = await portalLink(api, operator, { role: "viewer" });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => openPortal(api, link.token)),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(statuses, [201, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
  });

  it("a link opened after its expiry is dead; one opened a millisecond before is not", async () => {
    const late = await portalLink(api, operator, { role: "viewer", expires_in: 60 });
    const onTime = await portalLink(api, operator, { role: "viewer", expires_in: 60 });
    clock.advance(60_000 - 1);
    assert.equal((await openPortal(api, onTime.token)).statusCode, 201);
    clock.advance(1);
    const dead = await openPortal(api, late.token);
    assert.equal(dead.statusCode, 401);
    assert.equal(dead.json<{ error: { code: string } }>().error.code, "portal_link_invalid");
  });

  it("a session lasts portalSessionTtl, then is 401", async () => {
    const session = await portalSession(
      api,
      (await portalLink(api, operator, { role: "viewer" })).token,
    );
    assert.equal((await callAs(api, session, "GET", inWorkspace("/webhooks"))).statusCode, 200);
    clock.advance(3_600_000);
    const ended = await callAs(api, session, "GET", inWorkspace("/webhooks"));
    assert.equal(ended.statusCode, 401);
  });

  it("a viewer's session reads but cannot change anything (403 insufficient_scope); a member's can", async () => {
    const viewer = await portalSession(
      api,
      (await portalLink(api, operator, { role: "viewer" })).token,
    );
    const member = await portalSession(
      api,
      (await portalLink(api, operator, { role: "member" })).token,
    );
    const body = { url: `https://${publicTestHost}/portal` };
    assert.equal((await callAs(api, viewer, "GET", inWorkspace("/webhooks"))).statusCode, 200);
    assert.equal((await callAs(api, viewer, "GET", inWorkspace("/deliveries"))).statusCode, 200);
    const refused = await callAs(api, viewer, "POST", inWorkspace("/webhooks"), { body });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json<{ error: { code: string } }>().error.code, "insufficient_scope");
    const created = await callAs(api, member, "POST", inWorkspace("/webhooks"), { body });
    assert.equal(created.statusCode, 201, created.body);
  });

  it("a session reaches its one workspace: another's routes are 403 workspace_forbidden, operator routes 403", async () => {
    const member = await portalSession(
      api,
      (await portalLink(api, operator, { role: "member" })).token,
    );
    for (const rest of ["/webhooks", "/events", "/deliveries", "/delivery-stats"]) {
      const refused = await callAs(api, member, "GET", inWorkspace(rest, otherWorkspace));
      assert.equal(refused.statusCode, 403, rest);
      assert.equal(refused.json<{ error: { code: string } }>().error.code, "workspace_forbidden");
    }
    const link = await callAs(api, member, "POST", inWorkspace("/portal-links"), {
      body: { role: "member" },
    });
    assert.equal(link.statusCode, 403);
    assert.equal(link.json<{ error: { code: string } }>().error.code, "operator_key_required");
    const who = await callAs(api, member, "GET", "/v1/auth/session");
    assert.deepEqual(
      who.json<{ kind: string; workspaces: { id: string }[] }>().workspaces.map((w) => w.id),
      [api.workspaceId],
    );
    assert.equal(who.json<{ kind: string }>().kind, "portal");
  });

  it("a portal token is never taken from a cookie", async () => {
    const session = await portalSession(
      api,
      (await portalLink(api, operator, { role: "viewer" })).token,
    );
    for (const name of ["svc_session", "__Host-svc_session"]) {
      const refused = await callAs(api, null, "GET", inWorkspace("/webhooks"), {
        headers: { cookie: `${name}=${session}` },
      });
      assert.equal(refused.statusCode, 401, name);
    }
  });

  it("only an operator key with portal:write makes links or ends sessions; an unknown workspace is 404", async () => {
    const owner = await signInAs(api, "owner");
    const withoutScope = await operatorToken(api, ["workspaces:read"]);
    for (const [token, code] of [
      [api.token, "operator_key_required"],
      [owner.token, "operator_key_required"],
      [withoutScope, "insufficient_scope"],
    ] as const) {
      for (const [method, rest] of [
        ["POST", "/portal-links"],
        ["DELETE", "/portal-sessions"],
      ] as const) {
        const refused = await callAs(api, token, method, inWorkspace(rest), {
          ...(method === "POST" ? { body: { role: "viewer" } } : {}),
        });
        assert.equal(refused.statusCode, 403, `${token.slice(0, 6)} ${method} ${rest}`);
        assert.equal(refused.json<{ error: { code: string } }>().error.code, code);
      }
    }
    const unknown = await callAs(api, operator, "POST", inWorkspace("/portal-links", "ws_nope"), {
      body: { role: "viewer" },
    });
    assert.equal(unknown.statusCode, 404);
    const unknownEnd = await callAs(
      api,
      operator,
      "DELETE",
      inWorkspace("/portal-sessions", "ws_nope"),
    );
    assert.equal(unknownEnd.statusCode, 404);
  });

  it("ending the workspace's portal sessions ends the running ones and kills the unopened links, counting both; other workspaces keep theirs", async () => {
    await callAs(api, operator, "DELETE", inWorkspace("/portal-sessions"));
    const running = await portalSession(
      api,
      (await portalLink(api, operator, { role: "member" })).token,
    );
    const unopened = await portalLink(api, operator, { role: "viewer" });
    const used = await portalLink(api, operator, { role: "viewer" });
    const usedSession = await portalSession(api, used.token);
    const elsewhere = await portalSession(
      api,
      (await portalLink(api, operator, { role: "viewer" }, otherWorkspace)).token,
    );
    const ended = await callAs(api, operator, "DELETE", inWorkspace("/portal-sessions"));
    assert.equal(ended.statusCode, 200, ended.body);
    assert.deepEqual(ended.json(), { ended: 3 }, "two sessions and one unopened link");
    for (const token of [running, usedSession]) {
      assert.equal((await callAs(api, token, "GET", inWorkspace("/webhooks"))).statusCode, 401);
    }
    assert.equal((await openPortal(api, unopened.token)).statusCode, 401);
    assert.equal(
      (await callAs(api, elsewhere, "GET", inWorkspace("/webhooks", otherWorkspace))).statusCode,
      200,
    );
    const again = await callAs(api, operator, "DELETE", inWorkspace("/portal-sessions"));
    assert.deepEqual(again.json(), { ended: 0 });
  });

  it("End session (DELETE /v1/auth/session) ends the portal session it carries", async () => {
    const session = await portalSession(
      api,
      (await portalLink(api, operator, { role: "viewer" })).token,
    );
    const ended = await callAs(api, session, "DELETE", "/v1/auth/session");
    assert.equal(ended.statusCode, 200, ended.body);
    assert.equal((await callAs(api, session, "GET", inWorkspace("/webhooks"))).statusCode, 401);
  });

  it("only hashes of the tokens are stored", async () => {
    const link = await portalLink(api, operator, { role: "viewer" });
    const session = await portalSession(api, link.token);
    assert.ok(await api.store.portal.findActiveSession(hashToken(session)));
    assert.equal(await api.store.portal.findActiveSession(session), null);
  });
});

describe("portal tokens and the access log", () => {
  it("neither a link's token nor a session's is in any log line, even at trace", async () => {
    const memory = memoryLogger("trace");
    const api = await inProcessApi({ logger: memory.logger });
    try {
      const operator = await operatorToken(api);
      const link = await portalLink(api, operator, { role: "member" });
      const session = await portalSession(api, link.token);
      await callAs(api, session, "GET", `/v1/workspaces/${api.workspaceId}/webhooks`);
      await openPortal(api, link.token);
      await callAs(api, session, "GET", "/v1/workspaces/ws_elsewhere/webhooks");
      const text = memory.text();
      assert.ok(text.includes("/v1/auth/portal-sessions"), "the opening is logged");
      for (const secret of [link.token, session, link.token.slice(4), session.slice(4)]) {
        assert.equal(text.includes(secret), false, "no token in the log");
      }
    } finally {
      await api.dispose();
    }
  });
});

describe("who may frame the portal", () => {
  const header = async (api: InProcessApi, path: string) => {
    const response = await api.app.inject({ method: "GET", url: path });
    assert.equal(response.statusCode, 200, `${path}: ${response.body.slice(0, 200)}`);
    return {
      csp: String(response.headers["content-security-policy"]),
      frameOptions: response.headers["x-frame-options"],
    };
  };
  const frameAncestors = (csp: string) =>
    csp
      .split(";")
      .map((directive) => directive.trim())
      .find((directive) => directive.startsWith("frame-ancestors "));

  it("/ui/portal lists exactly portalFrameAncestors, with no X-Frame-Options; every other page keeps 'none' and DENY", async () => {
    const api = await inProcessApi({
      settings: { portalFrameAncestors: "http://localhost:3000, https://*.Example.com" },
    });
    try {
      const portal = await header(api, "/ui/portal");
      assert.equal(
        frameAncestors(portal.csp),
        "frame-ancestors http://localhost:3000 https://*.example.com",
      );
      assert.equal(portal.frameOptions, undefined);
      assert.match(portal.csp, /script-src 'self'; style-src 'self'/);
      for (const path of ["/ui/", "/ui/index.html", "/ui/portal.html", "/ui/favicon.svg"]) {
        const other = await header(api, path);
        assert.equal(frameAncestors(other.csp), "frame-ancestors 'none'", path);
        assert.equal(other.frameOptions, "DENY", path);
      }
    } finally {
      await api.dispose();
    }
  });

  it("without the setting, the portal may be framed by nobody either", async () => {
    const api = await inProcessApi();
    try {
      const portal = await header(api, "/ui/portal");
      assert.equal(frameAncestors(portal.csp), "frame-ancestors 'none'");
      assert.equal(portal.frameOptions, "DENY");
    } finally {
      await api.dispose();
    }
  });
});
