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

/** `svc_session=<token>` of a Set-Cookie header, and its attributes. */
function sessionCookie(response: LightMyRequestResponse) {
  const cookie = response.cookies.find((each) => each.name === "svc_session");
  assert.ok(cookie, `a svc_session cookie in ${JSON.stringify(response.headers["set-cookie"])}`);
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
        headers: { cookie: `svc_session=${options.cookie ?? cookie}`, ...options.headers },
        ...(options.body === undefined ? {} : { payload: options.body as object }),
      });

    before(async () => {
      api = await inProcessApi({ settings: { behindTls: String(behindTls) } });
      const response = await signIn("owner", "owner@example.com");
      signedIn = response.json<BrowserSignedIn>();
      cookie = sessionCookie(response).value;
    });
    after(() => api.dispose());

    it("sign-in sets an HttpOnly, SameSite=Strict session cookie for the whole origin, Secure only behind TLS, and answers no token", async () => {
      const response = await api.app.inject({
        method: "POST",
        url: "/v1/auth/browser-sessions",
        payload: { email: "owner@example.com", password: PASSWORD },
      });
      const set = sessionCookie(response);
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

    it("two session cookies (one planted by another site of the host) are trusted neither", async () => {
      const planted = await withCookie("GET", "/webhooks", {
        cookie: `svs_planted; svc_session=${cookie}`,
      });
      assert.equal(planted.statusCode, 401, planted.body);
      assert.match(planted.body, /more than one session cookie/);
    });

    it("the cookie does not open, stream or end listen sessions: those take a Bearer token", async () => {
      for (const [method, path] of [
        ["GET", "/listen-sessions"],
        ["GET", "/listen-sessions/lsn_000000000000000000000001/stream"],
      ] as const) {
        const refused = await withCookie(method, path);
        assert.equal(refused.statusCode, 401, `${path}: ${refused.body}`);
      }
    });

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
      const viewerCookie = sessionCookie(response).value;
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
      const own = sessionCookie(response).value;
      const { csrf_token } = response.json<BrowserSignedIn>();
      const forged = await withCookie("DELETE", "/v1/auth/session", { cookie: own });
      assert.equal(forged.statusCode, 403, forged.body);
      const signedOut = await withCookie("DELETE", "/v1/auth/session", {
        cookie: own,
        headers: { "x-csrf-token": csrf_token },
      });
      assert.equal(signedOut.statusCode, 200, signedOut.body);
      const cleared = sessionCookie(signedOut);
      assert.equal(cleared.value, "");
      const after = await withCookie("GET", "/webhooks", { cookie: own });
      assert.equal(after.statusCode, 401);
    });
  });
}
