import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { hashPassword } from "../../src/crypto/passwords.ts";
import { inProcessApi, publicTestHost, type InProcessApi } from "../support/in-process-api.ts";

const PASSWORD = "correct horse battery staple";

interface BrowserSignedIn {
  csrf_token: string;
  expires_at: string;
  workspaces: { id: string; scopes: string[] }[];
}

/**
 * The session cookie's name: `__Host-svc_session` when it is Secure (behind TLS), so that no
 * plain-http port nor sibling domain can set it; `svc_session` on plain http (decision 39).
 */
function cookieName(behindTls: boolean): string {
  return behindTls ? "__Host-svc_session" : "svc_session";
}

/** The session cookie of a Set-Cookie header, and its attributes. */
function sessionCookie(response: LightMyRequestResponse, name: string) {
  const cookie = response.cookies.find((each) => each.name === name);
  assert.ok(cookie, `a ${name} cookie in ${JSON.stringify(response.headers["set-cookie"])}`);
  return cookie;
}

/**
 * The dashboard's cookie session (decision 35): the same session as a sign-in's, in an
 * HttpOnly SameSite=Strict cookie, and a CSRF token that every change made with it must carry.
 */
for (const behindTls of [false, true]) {
  describe(`the dashboard's session cookie and CSRF token (behindTls ${behindTls})`, () => {
    let api: InProcessApi;
    let signedIn: BrowserSignedIn;
    let cookie: string;
    const name = cookieName(behindTls);
    const otherName = cookieName(!behindTls);
    const sessionCookieOf = (response: LightMyRequestResponse) => sessionCookie(response, name);

    const signIn = async (role: "owner" | "viewer", email: string) => {
      await api.store.credentials.createUser(
        {
          id: `usr_${role}${behindTls ? "t" : "f"}`,
          email,
          passwordHash: await hashPassword(PASSWORD),
        },
        { workspaceId: api.workspaceId, role },
      );
      const response = await api.app.inject({
        method: "POST",
        url: "/v1/auth/browser-sessions",
        payload: { email, password: PASSWORD },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response;
    };
    /** A request as the browser sends it: the cookie, no Authorization header. */
    const withCookie = (
      method: "GET" | "POST" | "PATCH" | "DELETE",
      path: string,
      options: { body?: unknown; headers?: Record<string, string>; cookie?: string } = {},
    ) =>
      api.app.inject({
        method,
        url: path.startsWith("/v1") ? path : `/v1/workspaces/${api.workspaceId}${path}`,
        headers: { cookie: `${name}=${options.cookie ?? cookie}`, ...options.headers },
        ...(options.body === undefined ? {} : { payload: options.body as object }),
      });

    before(async () => {
      api = await inProcessApi({ settings: { behindTls: String(behindTls) } });
      const response = await signIn("owner", "owner@example.com");
      signedIn = response.json<BrowserSignedIn>();
      cookie = sessionCookieOf(response).value;
    });
    after(() => api.dispose());

    it(`sign-in sets an HttpOnly, SameSite=Strict session cookie ${name} for the whole origin, Secure only behind TLS, and answers no token`, async () => {
      const response = await api.app.inject({
        method: "POST",
        url: "/v1/auth/browser-sessions",
        payload: { email: "owner@example.com", password: PASSWORD },
      });
      const set = sessionCookieOf(response);
      // `__Host-` takes Secure, Path=/ and no Domain, or the browser drops the cookie.
      assert.equal(set.domain, undefined);
      assert.match(set.value, /^svs_/);
      assert.equal(set.httpOnly, true);
      assert.equal(set.sameSite, "Strict");
      assert.equal(set.path, "/");
      assert.equal(set.secure === true, behindTls);
      assert.equal(Date.parse(String(set.expires)) > Date.now(), true);
      const body = response.json<Record<string, unknown>>();
      assert.equal(body.token, undefined, "the token is in the cookie only");
      assert.equal(response.body.includes(set.value), false);
      assert.match(String(body.csrf_token), /^[A-Za-z0-9_-]{43}$/);
    });

    it("two session cookies (one planted by another site of the host), under either name, are trusted neither", async () => {
      for (const both of [
        `svs_planted; ${name}=${cookie}`,
        `${name}=${cookie}; ${otherName}=svs_planted`,
        `${otherName}=svs_planted; ${name}=${cookie}`,
      ]) {
        const planted = await api.app.inject({
          method: "GET",
          url: `/v1/workspaces/${api.workspaceId}/webhooks`,
          headers: { cookie: both.startsWith("svs_") ? `${name}=${both}` : both },
        });
        assert.equal(planted.statusCode, 401, `${both}: ${planted.body}`);
        assert.match(planted.body, /more than one session cookie/);
      }
    });

    it(`the session is read under either name (${otherName} too)`, async () => {
      const read = await api.app.inject({
        method: "GET",
        url: `/v1/workspaces/${api.workspaceId}/webhooks`,
        headers: { cookie: `${otherName}=${cookie}` },
      });
      assert.equal(read.statusCode, 200, read.body);
    });

    it("the cookie does not open, stream or end listen sessions, however the path is spelled: those take a Bearer token", async () => {
      const id = "lsn_000000000000000000000001";
      for (const [method, path] of [
        ["GET", "/listen-sessions"],
        ["GET", `/listen-sessions/${id}/stream`],
        // The router decodes these to the same routes: the refusal must follow the route.
        ["GET", `/listen%2Dsessions/${id}/stream`],
        ["GET", `/listen%2dsessions/${id}/stream`],
        ["GET", `/%6Cisten-sessions/${id}/stream`],
        ["GET", `/listen-sessions/${id}/%73tream`],
        ["DELETE", `/listen%2Dsessions/${id}`],
        ["POST", "/listen%2Dsessions"],
      ] as const) {
        const refused = await withCookie(method, path, {
          headers: { "x-csrf-token": signedIn.csrf_token },
        });
        assert.equal(refused.statusCode, 401, `${method} ${path}: ${refused.body}`);
        assert.match(refused.body, /not the dashboard's cookie/);
      }
    });

    if (behindTls) {
      it("a Secure sign-in clears a plain svc_session left from before behindTls was set", async () => {
        const response = await api.app.inject({
          method: "POST",
          url: "/v1/auth/browser-sessions",
          payload: { email: "owner@example.com", password: PASSWORD },
        });
        const plain = sessionCookie(response, "svc_session");
        assert.equal(plain.value, "");
        assert.ok(Date.parse(String(plain.expires)) <= Date.now(), "expired");
      });
    }

    it("the cookie authenticates reads without a CSRF token, and who-am-I gives the CSRF token back", async () => {
      const list = await withCookie("GET", "/webhooks");
      assert.equal(list.statusCode, 200, list.body);
      const who = await withCookie("GET", "/v1/auth/session");
      assert.equal(who.statusCode, 200, who.body);
      assert.equal(who.json<{ csrf_token: string }>().csrf_token, signedIn.csrf_token);
    });

    it("a change with the cookie but no CSRF token, or another one, is refused 403 csrf_token_invalid and changes nothing", async () => {
      const attempts: Record<string, string>[] = [
        {},
        { "x-csrf-token": "forged" },
        { "x-csrf-token": "" },
      ];
      for (const headers of attempts) {
        const refused = await withCookie("POST", "/webhooks", {
          body: { url: `https://${publicTestHost}/csrf` },
          headers,
        });
        assert.equal(refused.statusCode, 403, refused.body);
        assert.equal(refused.json<{ error: { code: string } }>().error.code, "csrf_token_invalid");
      }
      const list = await withCookie("GET", "/webhooks");
      assert.equal(list.json<{ data: unknown[] }>().data.length, 0);
    });

    it("a change with the cookie and its CSRF token goes through", async () => {
      const created = await withCookie("POST", "/webhooks", {
        body: { url: `https://${publicTestHost}/with-token` },
        headers: { "x-csrf-token": signedIn.csrf_token },
      });
      assert.equal(created.statusCode, 201, created.body);
    });

    it("a forged or unknown cookie is 401, as is an API key put in the cookie", async () => {
      for (const forged of ["svs_forged", "not-a-session", api.token]) {
        const refused = await withCookie("GET", "/webhooks", { cookie: forged });
        assert.equal(refused.statusCode, 401, `${forged}: ${refused.body}`);
      }
    });

    it("a Bearer request is judged by its header alone: no CSRF token needed, the cookie ignored", async () => {
      const created = await api.call("POST", "/webhooks", {
        body: { url: `https://${publicTestHost}/bearer` },
        headers: { cookie: "svc_session=svs_forged" },
      });
      assert.equal(created.statusCode, 201, created.body);
    });

    it("a viewer's cookie session is refused a change even with its CSRF token (403 insufficient_scope)", async () => {
      const response = await signIn("viewer", "viewer@example.com");
      const viewerCookie = sessionCookieOf(response).value;
      const { csrf_token } = response.json<BrowserSignedIn>();
      const refused = await withCookie("POST", "/webhooks", {
        body: { url: `https://${publicTestHost}/viewer` },
        headers: { "x-csrf-token": csrf_token },
        cookie: viewerCookie,
      });
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(refused.json<{ error: { code: string } }>().error.code, "insufficient_scope");
    });

    it("signing out needs the CSRF token, revokes the session and clears the cookie", async () => {
      const response = await api.app.inject({
        method: "POST",
        url: "/v1/auth/browser-sessions",
        payload: { email: "owner@example.com", password: PASSWORD },
      });
      const own = sessionCookieOf(response).value;
      const { csrf_token } = response.json<BrowserSignedIn>();
      const forged = await withCookie("DELETE", "/v1/auth/session", { cookie: own });
      assert.equal(forged.statusCode, 403, forged.body);
      const signedOut = await withCookie("DELETE", "/v1/auth/session", {
        cookie: own,
        headers: { "x-csrf-token": csrf_token },
      });
      assert.equal(signedOut.statusCode, 200, signedOut.body);
      const cleared = sessionCookieOf(signedOut);
      assert.equal(cleared.value, "");
      // The plain name is cleared too: one left beside the Secure one would be a second cookie.
      assert.equal(sessionCookie(signedOut, "svc_session").value, "");
      const after = await withCookie("GET", "/webhooks", { cookie: own });
      assert.equal(after.statusCode, 401);
    });
  });
}
