import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  accessConfig,
  operations,
  routePath,
  type Operation,
} from "../../src/contract/operations.ts";
import { hashPassword } from "../../src/crypto/passwords.ts";
import type { Scope } from "../../src/interfaces.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { openStream } from "../support/listen-stream.ts";

const PASSWORD = "correct horse battery staple";

/** An answer as the checks judge it: its status and its error code. */
interface Judgement {
  readonly status: number;
  readonly code: string | null;
}

/**
 * Sends `path` byte for byte over a real connection (`inject()` would normalise `/./` and
 * `..` before the router sees them, as no attacker's client has to).
 */
function send(
  base: URL,
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<Judgement> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: base.hostname, port: base.port, method, path, headers, agent },
      (answer) => {
        if (String(answer.headers["content-type"]).startsWith("text/event-stream")) {
          // A stream was opened (the defect this file guards against): judged, then dropped.
          answer.destroy();
          resolve({ status: answer.statusCode ?? 0, code: null });
          return;
        }
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          let code: string | null = null;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
          } catch {
            // No body (HEAD), or not JSON.
          }
          resolve({ status: answer.statusCode ?? 0, code });
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/** Upper-case hex of a character's UTF-8 bytes, `%XX` each. */
function encoded(character: string): string {
  return [...Buffer.from(character)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
}

/**
 * The ways a path can be spelled that a router might take for the same route, or not:
 * percent-encoded letters (upper and lower case hex), an encoded `-` and `/`, double encoding,
 * the case of a segment, a trailing slash, `;` parameters, `//`, `/./`, `..` and their encoded
 * forms. `literal` is a segment of the route's own (not a parameter), where each is applied.
 */
function variantsOf(path: string, literal: string): string[] {
  const [head, tail] = [path.slice(0, path.indexOf(literal)), path.slice(path.indexOf(literal))];
  const rest = tail.slice(literal.length);
  const first = literal.charAt(0);
  const dash = literal.includes("-");
  const spelled = (segment: string) => `${head}${segment}${rest}`;
  return [
    spelled(`${encoded(first)}${literal.slice(1)}`),
    spelled(`${encoded(first).toLowerCase()}${literal.slice(1)}`),
    spelled(`%25${encoded(first).slice(1)}${literal.slice(1)}`),
    spelled(literal.toUpperCase()),
    spelled(`${first.toUpperCase()}${literal.slice(1)}`),
    ...(dash ? [spelled(literal.replace("-", "%2D")), spelled(literal.replace("-", "%2d"))] : []),
    spelled(`${literal};x=1`),
    `${path};x=1`,
    `${path}/`,
    `${path}//`,
    `${head}/${tail}`,
    `${head}./${tail}`,
    `${head}x/../${tail}`,
    `${head}%2e/${tail}`,
    `${head}x/%2e%2e/${tail}`,
    `${head.slice(0, -1)}%2F${tail}`,
    `/${path}`,
    path.replace("/v1/", "/V1/"),
    path.replace("/v1/", `/${encoded("v")}1/`),
  ];
}

/** The segments of an operation's path that are its own (not `{parameters}`), past `/v1`. */
function literalsOf(operation: Operation): string[] {
  return operation.path
    .split("/")
    .filter((segment) => segment !== "" && segment !== "v1" && !segment.startsWith("{"));
}

/** The access of the operation whose route is `template`, for `method` (HEAD is GET's). */
function accessOf(method: string, template: string) {
  const wanted = method === "HEAD" ? "get" : method.toLowerCase();
  const operation = Object.values(operations as Record<string, Operation>).find(
    (each) => routePath(each) === template && each.method === wanted,
  );
  return operation === undefined ? null : accessConfig(operation).config;
}

/** A scope an API key can have that the operation does not accept. */
function otherScope(operation: Operation): Scope {
  return operation.access === "events:read" || operation.access === "events:write"
    ? "webhooks:read"
    : "events:read";
}

/**
 * Every access decision is made on the route the router matched (decision 39): whatever a
 * path's spelling, a request either finds no route (404 `route_not_found`, 405) or is judged
 * exactly as the canonical path is, by every operation with a scope or a credential in the
 * contract (a new operation is swept as soon as it is declared).
 */
describe("access is decided on the matched route, however the path is spelled", () => {
  let api: InProcessApi;
  let base: URL;
  let agent: Agent;
  let cookie: string;
  let csrf: string;
  /** The route template of the last answer; null when no route matched. */
  let matched: string | null = null;
  const matchedRoute = (): string | null => matched;

  before(async () => {
    api = await inProcessApi();
    agent = new Agent({ keepAlive: true, maxSockets: 4 });
    // The route each answer came from (before it is sent, so the client never reads it first).
    api.app.addHook("onSend", (request, _reply, payload, done) => {
      matched = request.routeOptions.url ?? null;
      done(null, payload);
    });
    await api.app.listen({ host: "127.0.0.1", port: 0 });
    base = new URL(`http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`);
    await api.store.credentials.createUser(
      { id: "usr_owner", email: "owner@example.com", passwordHash: await hashPassword(PASSWORD) },
      { workspaceId: api.workspaceId, role: "owner" },
    );
    const signedIn = await api.app.inject({
      method: "POST",
      url: "/v1/auth/browser-sessions",
      payload: { email: "owner@example.com", password: PASSWORD },
    });
    const set = signedIn.cookies.find((each) => each.name === "svc_session");
    assert.ok(set, signedIn.body);
    cookie = set.value;
    csrf = signedIn.json<{ csrf_token: string }>().csrf_token;
  });
  after(async () => {
    agent.destroy();
    await api.dispose();
  });

  /** The canonical path of an operation in the test's workspace, with ids that name nothing. */
  const canonical = (operation: Operation) =>
    operation.path
      .replace("{workspace}", api.workspaceId)
      .replace("{id}", operation.tag === "Listen" ? "lsn_000000000000000000000001" : "dst_0001");

  /**
   * Credentials that each of the checks refuses, or that pass them (the dashboard's cookie on a
   * read): none; a key without the scope; the cookie without its CSRF token; the cookie with it.
   */
  const credentialsFor = async (operation: Operation) => ({
    none: {},
    "another scope":
      operation.access === "credential"
        ? null
        : { authorization: `Bearer ${await api.key([otherScope(operation)])}` },
    cookie: { cookie: `svc_session=${cookie}` },
    "cookie and CSRF token":
      operation.method === "get" ? null : { cookie: `svc_session=${cookie}`, "x-csrf-token": csrf },
  });

  const restricted = Object.entries(operations as Record<string, Operation>).filter(
    ([, operation]) => operation.access !== "none",
  );

  for (const [id, operation] of restricted) {
    it(`${id}: ${operation.method.toUpperCase()} ${operation.path}`, async () => {
      const path = canonical(operation);
      const template = routePath(operation);
      // A change the checks would let through is never sent: it would change something.
      const sendable = (credential: string) =>
        credential !== "cookie and CSRF token" || operation.cookie === false;
      const methods =
        operation.method === "get" ? ["GET", "HEAD"] : [operation.method.toUpperCase()];
      let reached = 0;
      for (const [credential, headers] of Object.entries(await credentialsFor(operation))) {
        if (headers === null || !sendable(credential)) continue;
        for (const method of methods) {
          const expected = await send(base, agent, method, path, headers);
          for (const literal of literalsOf(operation)) {
            for (const variant of variantsOf(path, literal)) {
              matched = null;
              const answer = await send(base, agent, method, variant, headers);
              // Set by the hook meanwhile (read through a function: the compiler cannot see that).
              const route = matchedRoute();
              const context = `${credential}: ${method} ${variant} (${String(route)})`;
              if (route === null) {
                // No route: 404, 405, or 400 for a path the router cannot read.
                assert.ok([400, 404, 405].includes(answer.status), `${context}: ${answer.status}`);
              } else if (route === template) {
                reached += 1;
                assert.deepEqual(answer, expected, `${context} is judged otherwise than ${path}`);
              } else if (accessOf(method, route)?.operatorScope !== undefined) {
                // An operator route (`/v1/workspaces/{workspace}` reads `ws_…%2Fwebhooks` as
                // its id; decision 42): judged by its own access, which no credential of a
                // workspace passes.
                assert.ok([401, 403].includes(answer.status), `${context}: ${answer.status}`);
              } else {
                // Another route (`…/webhooks/` is `…/webhooks/{id}` with an empty id): it is
                // judged by its own access, which must then be the same.
                assert.deepEqual(accessOf(method, route), accessOf(method, template), context);
              }
            }
          }
        }
      }
      // Letters the router decodes reach the route: the sweep tests the checks, not only it.
      assert.ok(reached > 0, "some spelling reached the route");
    });
  }

  it("the dashboard's cookie cannot take over a running listen session through an encoded path", async () => {
    const session = (await api.call("POST", "/listen-sessions", { body: {} })).json<{
      id: string;
    }>();
    const path = `/v1/workspaces/${api.workspaceId}/listen-sessions/${session.id}/stream`;
    const victim = await openStream(base.origin, path, api.token);
    await victim.next("ready");
    for (const spelled of [
      path.replace("listen-sessions", "listen%2Dsessions"),
      path.replace("listen-sessions", "%6Cisten-sessions"),
    ]) {
      const answer = await send(base, agent, "GET", spelled, { cookie: `svc_session=${cookie}` });
      assert.deepEqual(answer, { status: 401, code: "unauthenticated" }, spelled);
    }
    // Still the victim's: it gets what is published, and was never replaced.
    await api.call("POST", "/events", { body: { type: "job.completed", data: { object: {} } } });
    await victim.next("notification");
    assert.ok(!victim.events.some((event) => event.event === "replaced"));
    victim.close();
    assert.equal((await api.call("DELETE", `/listen-sessions/${session.id}`)).statusCode, 200);
  });
});
