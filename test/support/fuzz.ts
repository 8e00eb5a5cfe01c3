import assert from "node:assert/strict";
import { monitorEventLoopDelay } from "node:perf_hooks";
import fc from "fast-check";
import { assertEnvelope } from "./envelope.ts";
import { checkAnswer } from "./openapi-check.ts";
import { publicTestHost, type InProcessApi } from "./in-process-api.ts";

/**
 * A fuzz run over every endpoint of the API, through `inject()` (decision 28): requests of
 * every method to every route and to paths near them, with queries, headers and bodies both
 * plausible and hostile. Every answer must be below 500 and, when it refuses, the contract's
 * envelope with a catalog code; no stored URL may hold a character the URL rules refuse.
 */

export interface FuzzFigures {
  readonly requests: number;
  /** Distinct (method, route, query names, content type, body structure) combinations. */
  readonly distinctShapes: number;
  /** Answers of 500 or more: must be 0. */
  readonly serverErrors: number;
  readonly slowestMs: number;
  /** The slowest request, for the report. */
  readonly slowest: string;
  /** Answers by status. */
  readonly statuses: Readonly<Record<string, number>>;
  /** The longest the event loop was held at once during the run (`monitorEventLoopDelay`). */
  readonly maxEventLoopDelayMs: number;
}

interface FuzzRequest {
  readonly method: string;
  readonly route: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload: string | undefined;
  readonly shape: string;
}

/** What the URL rules refuse anywhere in a URL: controls, whitespace, bidi, lone surrogates. */
export const forbiddenInUrl =
  // eslint-disable-next-line no-control-regex -- control characters are what it matches
  /[\u0000-\u0020\u007f-\u00a0\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f\u2066-\u2069\u3000\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Characters an attacker slips into text: controls, escape sequences, bidi, separators. */
const nasty = fc.constantFrom(
  "\u0000",
  "\u0007",
  "\t",
  "\n",
  "\r\n",
  "\u001b[2J",
  "\u001b]0;t\u0007",
  "\u007f",
  "\u0085",
  "\u009b",
  "\u00a0",
  "\u202e",
  "\u2066",
  "\u200b",
  "\u2028",
  "\ufeff",
  "\ud800",
  "\udc00",
  " ",
  "%",
  "%00",
  "%ff",
  "../",
  "\\",
  "\u3000",
);

/** A string with hostile characters at random places. */
const spiked = fc
  .tuple(fc.array(fc.oneof(fc.string({ maxLength: 8 }), nasty), { maxLength: 6 }))
  .map(([parts]) => parts.join(""));

function encodeSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate: the raw percent-encoding of its replacement.
    return "%EF%BF%BD";
  }
}

/** A path segment: a real id, a plausible one, a hostile one, or broken percent-encoding. */
function segment(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known) },
    fc.string({ maxLength: 20 }).map(encodeSegment),
    spiked.map(encodeSegment),
    fc.constantFrom("%ff", "%", "%2", "%E0%A4%A", "a".repeat(101), "%00", "..", ".", "%2F"),
  );
}

const urls = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.webUrl().map((url) => url.replace(/^http:/, "https:")),
  spiked.map((tail) => `https://${publicTestHost}/${tail}`),
  fc.tuple(spiked, spiked).map(([host, path]) => `https://${host}${publicTestHost}/${path}`),
  fc.ipV4().map((ip) => `https://${ip}/`),
  fc.ipV6().map((ip) => `https://[${ip}]/`),
  fc.integer({ min: 0, max: 70_000 }).map((port) => `https://${publicTestHost}:${port}/`),
  fc.constantFrom(
    `https://${publicTestHost}/ok`,
    `https://${publicTestHost}/ok\u001b]0;TITLE\u0007\u001b[2J`,
    "https://[::127.0.0.1]/",
    "https://[::7f00:1]/",
    "https://[1::1]/",
    "https://user:pw@hooks.test/",
    `https://${"a".repeat(2040)}.test/`,
  ),
  fc.string({ maxLength: 40 }),
);

const eventNames = fc.oneof(
  fc.array(
    fc.oneof(
      fc.constantFrom("*", "job.completed", "job.failed", "collection.completed"),
      fc.string({ maxLength: 12 }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
    { maxLength: 40 },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

const bodies = fc.oneof(
  fc.record(
    {
      url: urls,
      events: eventNames,
      active: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: [] },
  ),
  fc.record({
    type: fc.oneof(fc.constantFrom("job.completed", "job.failed"), fc.string({ maxLength: 20 })),
    data: fc.oneof(
      fc.record({
        object: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 40 })),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    ),
  }),
  fc.record({ email: fc.oneof(fc.emailAddress(), spiked), password: fc.string({ maxLength: 30 }) }),
  fc.jsonValue({ maxDepth: 6 }),
  fc.dictionary(spiked, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }),
);

/** Bodies that JSON.stringify cannot make: malformed, very deep, or very long lists. */
const rawBodies = fc.oneof(
  fc.string({ maxLength: 60 }),
  spiked,
  fc
    .integer({ min: 1, max: 6000 })
    .map(
      (n) => `{"type":"job.completed","data":{"object":{"a":${"[".repeat(n)}${"]".repeat(n)}}}}`,
    ),
  fc
    .integer({ min: 1, max: 9000 })
    .map((n) => `{"url":"https://${publicTestHost}/","events":[${"0,".repeat(n)}0]}`),
  fc.constantFrom(
    "",
    "{",
    "null",
    "[]",
    '{"__proto__":{"a":1}}',
    '{"constructor":{"prototype":{}}}',
    '{"type":"job.completed","data":{"object":{"__proto__":{"a":1},"constructor":{"prototype":{}}}}}',
  ),
);

const queries = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          "limit",
          "cursor",
          "since",
          "until",
          "status",
          "type",
          "destination",
          "event",
        ),
        fc.string({ maxLength: 6 }).map(encodeSegment),
      ),
      fc.oneof(
        fc.integer({ min: -5, max: 200 }).map(String),
        fc.constantFrom("0x10", "%205", "1e1", "", "5.0", "%ff", "Infinity", "NaN"),
        fc.constantFrom(
          "2026-11-25T12:00:00Z",
          "2026-11-25T12:00:00%2B01:00",
          "2026-13-45T99:00:00Z",
          "1e400",
          "failed",
          "pending",
          "job.failed",
          "dst_unknown",
          "evt_000000000000aaaaaaaaaaaaaaaa",
        ),
        fc.string({ maxLength: 12 }).map(encodeSegment),
      ),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs);

/** Every route of the API, and a few paths that are not. */
function routes(workspaceId: string, destinationIds: readonly string[]) {
  const ws = segment([workspaceId, "ws_other"]);
  const id = segment([...destinationIds, "dst_unknown"]);
  // Ids of the log: well formed or not, of an old time (expired) or none.
  const logIds = segment([
    "evt_000000000000aaaaaaaaaaaaaaaa",
    "dlv_000000000000aaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbb",
    `dlv_${"f".repeat(28)}_${"0".repeat(24)}`,
    "dlv_x",
    "evt_",
  ]);
  return fc.oneof(
    ws.map((w) => ({ route: "webhooks", path: `/v1/workspaces/${w}/webhooks` })),
    fc
      .tuple(ws, id)
      .map(([w, d]) => ({ route: "webhook", path: `/v1/workspaces/${w}/webhooks/${d}` })),
    ws.map((w) => ({ route: "events", path: `/v1/workspaces/${w}/events` })),
    fc
      .tuple(ws, logIds)
      .map(([w, e]) => ({ route: "event", path: `/v1/workspaces/${w}/events/${e}` })),
    ws.map((w) => ({ route: "deliveries", path: `/v1/workspaces/${w}/deliveries` })),
    fc.tuple(ws, logIds, fc.constantFrom("", "/retry")).map(([w, d, action]) => ({
      route: action === "" ? "delivery" : "retry",
      path: `/v1/workspaces/${w}/deliveries/${d}${action}`,
    })),
    fc.tuple(ws, id).map(([w, d]) => ({
      route: "recover",
      path: `/v1/workspaces/${w}/webhooks/${d}/recover`,
    })),
    fc.constantFrom(
      { route: "sessions", path: "/v1/auth/sessions" },
      { route: "session", path: "/v1/auth/session" },
      { route: "healthz", path: "/healthz" },
      { route: "readyz", path: "/readyz" },
    ),
    segment(["v1", "v2", "ui"]).map((first) => ({ route: "other", path: `/${first}/x` })),
  );
}

/** The structure of a JSON value, for counting distinct shapes: types, keys, lengths' magnitude. */
function structure(value: unknown, depth = 0): string {
  if (depth > 3) return "…";
  if (Array.isArray(value)) {
    return `[${String(value.length).length}:${[...new Set(value.slice(0, 3).map((item) => structure(item, depth + 1)))].join("|")}]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).slice(0, 6);
    return `{${entries.map(([key, member]) => `${key.length < 12 ? key : "k"}:${structure(member, depth + 1)}`).join(",")}}`;
  }
  return typeof value;
}

/** Requests as a client of the API would make them, each with hostile parts. */
function plausibleRequests(api: InProcessApi, destinationIds: readonly string[]) {
  const ws = `/v1/workspaces/${api.workspaceId}`;
  const id = fc.constantFrom(...destinationIds);
  const validEvents = fc.subarray(["*", "job.completed", "job.failed", "collection.completed"], {
    minLength: 1,
  });
  const subscription = fc.oneof({ weight: 3, arbitrary: validEvents }, eventNames);
  return fc.oneof(
    fc.record({ url: urls, events: subscription }, { requiredKeys: ["url"] }).map((body) => ({
      method: "POST",
      route: "webhooks",
      path: `${ws}/webhooks`,
      body,
    })),
    fc
      .tuple(
        id,
        fc.record({ url: urls, events: subscription, active: fc.boolean() }, { requiredKeys: [] }),
      )
      .map(([target, body]) => ({
        method: "PATCH",
        route: "webhook",
        path: `${ws}/webhooks/${target}`,
        body,
      })),
    fc
      .record({
        type: fc.constantFrom("job.completed", "job.failed", "collection.completed"),
        data: fc.record({
          object: fc.dictionary(spiked, fc.jsonValue({ maxDepth: 40 }), { maxKeys: 6 }),
        }),
      })
      .map((body) => ({ method: "POST", route: "events", path: `${ws}/events`, body })),
    fc.tuple(fc.constantFrom("GET", "DELETE"), id).map(([method, target]) => ({
      method,
      route: "webhook",
      path: `${ws}/webhooks/${target}`,
      body: undefined,
    })),
    fc.constant({ method: "GET", route: "webhooks", path: `${ws}/webhooks`, body: undefined }),
    fc
      .tuple(
        id,
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          spiked,
        ),
      )
      .map(([target, since]) => ({
        method: "POST",
        route: "recover",
        path: `${ws}/webhooks/${target}/recover`,
        body: { since },
      })),
    fc.constantFrom("events", "deliveries").map((list) => ({
      method: "GET",
      route: list,
      path: `${ws}/${list}`,
      body: undefined,
    })),
    fc
      .record({
        email: fc.oneof(fc.emailAddress(), spiked),
        password: fc.string({ maxLength: 30 }),
      })
      .map((body) => ({ method: "POST", route: "sessions", path: "/v1/auth/sessions", body })),
  );
}

function requests(api: InProcessApi, destinationIds: readonly string[]): fc.Arbitrary<FuzzRequest> {
  const anything = fc.record({
    method: fc.constantFrom("GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"),
    target: routes(api.workspaceId, destinationIds),
    body: fc.option(
      fc.oneof(
        { weight: 3, arbitrary: bodies.map((value) => ({ value })) },
        rawBodies.map((raw) => ({ raw })),
      ),
    ),
  });
  const plausible = plausibleRequests(api, destinationIds).map(({ method, route, path, body }) => ({
    method,
    target: { route, path },
    body: body === undefined ? null : { value: body },
  }));
  return fc
    .record({
      request: fc.oneof(plausible, anything),
      query: queries,
      authorization: fc.oneof(
        { weight: 6, arbitrary: fc.constant(`Bearer ${api.token}`) },
        fc.constantFrom("Bearer svc_nope", "", "Basic eDp5"),
      ),
      contentType: fc.oneof(
        { weight: 6, arbitrary: fc.constant("application/json") },
        fc.constantFrom(
          "application/json; charset=utf-8",
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/json; charset=latin1",
          "APPLICATION/JSON",
          "",
        ),
      ),
      idempotencyKey: fc.option(
        fc.oneof(fc.string({ maxLength: 20 }), spiked, fc.constant("k".repeat(300))),
      ),
    })
    .map(({ request, query, authorization, contentType, idempotencyKey }) => {
      const { method, target, body } = request;
      const headers: Record<string, string> = {};
      if (authorization !== "") headers.authorization = authorization;
      if (contentType !== "" && body !== null) headers["content-type"] = contentType;
      if (idempotencyKey !== null) {
        // A header value cannot carry controls or line breaks; the HTTP layer refuses them.
        // eslint-disable-next-line no-control-regex -- control characters are what it matches
        headers["idempotency-key"] = idempotencyKey.replace(/[\u0000-\u001f\u007f-\uffff]/g, "?");
      }
      const payload =
        body === null ? undefined : "raw" in body ? body.raw : JSON.stringify(body.value);
      const search = query.map(([key, value]) => `${key}=${value}`).join("&");
      const shapeOfBody = body === null ? "none" : "raw" in body ? "raw" : structure(body.value);
      return {
        method,
        route: target.route,
        url: search === "" ? target.path : `${target.path}?${search}`,
        headers,
        payload,
        shape: `${method} ${target.route} ${query
          .map(([key]) => key)
          .sort()
          .join("&")} ${contentType} ${shapeOfBody}`,
      };
    });
}

/**
 * Runs `runs` requests against `api` (seeded by `seed`), asserting on each answer; rejects with
 * fast-check's shrunk counterexample on the first that breaks a rule. Resolves with the figures.
 */
export async function fuzzApi(
  api: InProcessApi,
  runs: number,
  seed?: number,
): Promise<FuzzFigures> {
  const destinationIds: string[] = [];
  for (const path of ["a", "b"]) {
    const created = await api.call("POST", "/webhooks", {
      body: { url: `https://${publicTestHost}/${path}` },
    });
    destinationIds.push(created.json<{ id: string }>().id);
  }
  const shapes = new Set<string>();
  const statuses: Record<string, number> = {};
  let count = 0;
  let serverErrors = 0;
  let slowestMs = 0;
  let slowest = "";
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  await fc.assert(
    fc.asyncProperty(requests(api, destinationIds), async (request) => {
      const started = performance.now();
      const response = await api.app.inject({
        method: request.method as "GET",
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      });
      const elapsed = performance.now() - started;
      count += 1;
      shapes.add(request.shape);
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      if (elapsed > slowestMs) {
        slowestMs = elapsed;
        slowest = `${request.method} ${request.url.slice(0, 80)} (${request.payload?.length ?? 0} bytes)`;
      }
      if (response.statusCode >= 500) serverErrors += 1;
      const what = `${request.method} ${request.url.slice(0, 120)}`;
      assert.ok(response.statusCode < 500, `${what}: ${response.statusCode} ${response.body}`);
      if (request.method === "HEAD") return;
      if (response.statusCode >= 400) {
        assertEnvelope(response, undefined, what);
      } else {
        assert.doesNotThrow(() => JSON.parse(response.body), `${what}: a JSON body`);
      }
      // And every answer is one the OpenAPI document describes.
      checkAnswer(request.method, request.url, response.statusCode, response.body);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  loopDelay.disable();
  let cursor: string | null = null;
  do {
    const page = await api.store.destinations.listDestinations(api.workspaceId, {
      limit: 100,
      cursor,
    });
    for (const { url } of page.items) {
      assert.doesNotMatch(url, forbiddenInUrl, `a stored URL: ${JSON.stringify(url)}`);
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  return {
    requests: count,
    distinctShapes: shapes.size,
    serverErrors,
    slowestMs,
    slowest,
    statuses,
    maxEventLoopDelayMs: loopDelay.max / 1e6,
  };
}
