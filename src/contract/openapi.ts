import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from "zod-openapi";
import { errorCatalog, type ErrorCode } from "../errors.ts";
import { VERSION } from "../version.ts";
import { errorSchema } from "./common.ts";
import {
  bodyErrors,
  changeErrors,
  acceptsCookie,
  cookieChangeErrors,
  commonErrors,
  pathParamErrors,
  isOperatorOperation,
  isReplayableStatus,
  operations,
  operatorErrors,
  workspaceErrors,
  type Operation,
  type ResponseHeader,
} from "./operations.ts";

/**
 * The OpenAPI 3.1 document of every `/v1` operation, made from `operations` (decision 31):
 * served at `GET /openapi.json`, and kept in `docs/openapi.json` (a test holds them equal).
 */

/** Every code an operation may answer with: its own and those every such operation may. */
export function errorsOf(operation: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>([...commonErrors, ...operation.errors]);
  if (operation.budget === false) codes.delete("too_many_requests");
  if (isOperatorOperation(operation)) for (const code of operatorErrors) codes.add(code);
  else if (operation.path.includes("{workspace}")) {
    for (const code of workspaceErrors) codes.add(code);
  }
  if (operation.params !== undefined) for (const code of pathParamErrors) codes.add(code);
  if (operation.body !== undefined) for (const code of bodyErrors) codes.add(code);
  if (operation.method !== "get") for (const code of changeErrors) codes.add(code);
  if (operation.method !== "get" && acceptsCookie(operation)) {
    for (const code of cookieChangeErrors) codes.add(code);
  }
  return [...codes];
}

function header(description: string, required: boolean, schema: Record<string, unknown>) {
  return { description, required, schema };
}

const retryAfter = header("Seconds to wait before trying again.", true, {
  type: "integer",
  minimum: 1,
});
/** The request budget's fields on its 429 (src/api/request-budget.ts, decision 45). */
const rateLimitPolicy = header(
  'The request budget, as draft-ietf-httpapi-ratelimit-headers writes it: `"budget";q=<requestBurst>;w=<seconds to refill it>`. Only on `too_many_requests`.',
  false,
  { type: "string" },
);
const rateLimit = header(
  'What is left of the budget: `"budget";r=0;t=<seconds until the next request may go>`. Only on `too_many_requests`.',
  false,
  { type: "string" },
);
/** Sent with every 401, as RFC 9110 asks (src/api/error-handler.ts). */
const wwwAuthenticate = header("The scheme to authenticate with.", true, {
  type: "string",
  const: "Bearer",
});
/** A change's answer replayed for its Idempotency-Key (src/api/idempotency.ts). */
const idempotentReplayed = header(
  "`true` when this is the first answer to the same request under the same Idempotency-Key, replayed.",
  false,
  { type: "string", const: "true" },
);

function headersOf(
  operation: Operation,
  status: number,
  own: Readonly<Record<string, ResponseHeader>> = {},
): Record<string, ReturnType<typeof header>> | undefined {
  const headers: Record<string, ReturnType<typeof header>> = {};
  // A 429 says when (sign-in limits, the request budget); every 503 does (the catalog gives
  // each one a delay). The budget's 429 also carries the IETF draft's RateLimit fields.
  if (status === 429 || status === 503) headers["Retry-After"] = retryAfter;
  if (status === 429 && errorsOf(operation).includes("too_many_requests")) {
    headers["RateLimit-Policy"] = rateLimitPolicy;
    headers.RateLimit = rateLimit;
  }
  if (status === 401) headers["WWW-Authenticate"] = wwwAuthenticate;
  if (operation.method !== "get" && isReplayableStatus(status)) {
    headers["Idempotent-Replayed"] = idempotentReplayed;
  }
  for (const [name, { description, required }] of Object.entries(own)) {
    headers[name] = header(description, required, { type: "string" });
  }
  return Object.keys(headers).length === 0 ? undefined : headers;
}

/**
 * An event stream's items, as OpenAPI 3.2 names them (`itemSchema`: the schema of each event,
 * where `schema` would be the whole stream). A 3.1 document may not carry `itemSchema` itself:
 * Redocly, Spectral and the 3.1 schema all refuse it. So `schema` is the one event (what 3.1
 * generators read for `text/event-stream`), and `x-itemSchema` the same for 3.2-ready tools.
 */
function streamItems(operation: Operation): { "x-itemSchema"?: { $ref: string } } {
  if (operation.success.mediaType !== "text/event-stream") return {};
  // An extension is copied as it is, not rendered from zod: a reference to the rendered one.
  const id = operation.success.schema.meta()?.id;
  if (id === undefined) throw new Error(`${operation.path}: an event stream's schema needs an id`);
  return { "x-itemSchema": { $ref: `#/components/schemas/${id}` } };
}

function withHeaders(headers: ReturnType<typeof headersOf>) {
  return headers === undefined ? {} : { headers };
}

function errorResponses(operation: Operation): Record<string, ZodOpenApiResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(operation)) {
    const status = errorCatalog[code].status;
    if (status === null) continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${errorCatalog[code].message}`).join("\n\n"),
      ...withHeaders(headersOf(operation, status)),
      content: { "application/json": { schema: errorSchema } },
    };
  }
  responses.default = {
    description:
      "Any other refusal, in the same envelope (the framework's own: 405, 408, 414, 431, …).",
    content: { "application/json": { schema: errorSchema } },
  };
  return responses;
}

/** An operation's credentials: a bearer token, or (where taken) the dashboard's cookie. */
function securityOf(operation: Operation): Record<string, string[]>[] {
  if (operation.access === "none") return [];
  const bearer: Record<string, string[]>[] = [{ bearer: [] }];
  return acceptsCookie(operation)
    ? [...bearer, { sessionCookie: [] }, { secureSessionCookie: [] }]
    : bearer;
}

const idempotencyKey = {
  in: "header",
  name: "Idempotency-Key",
  required: false,
  description:
    "Makes a retried request safe: the first answer is replayed for 24 hours to the same request with the same key.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
} as const;

const csrfToken = {
  in: "header",
  name: "X-CSRF-Token",
  required: false,
  description:
    "The CSRF token of the dashboard's sign-in (`csrf_token`): required when the request authenticates with the session cookie, ignored with `Authorization`.",
  schema: { type: "string" },
} as const;

/** The body's examples and whether it may be left out: the API reads no body as `{}`. */
function requestBodyOf(operation: Operation): ZodOpenApiOperationObject["requestBody"] {
  if (operation.body === undefined) return undefined;
  return {
    required: !operation.body.safeParse({}).success,
    content: {
      "application/json": {
        schema: operation.body,
        ...examplesOf(operation.bodyExample),
      },
    },
  };
}

function examplesOf(example: unknown): { examples?: Record<string, { value: unknown }> } {
  return example === undefined ? {} : { examples: { example: { value: example } } };
}

function operationObject(id: string, operation: Operation): ZodOpenApiOperationObject {
  const changes = operation.method !== "get";
  return {
    operationId: id,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description === undefined ? {} : { description: operation.description }),
    security: securityOf(operation),
    ...(operation.access !== "none" && operation.access !== "credential"
      ? { "x-scope": operation.access }
      : {}),
    requestParams: {
      ...(operation.params === undefined ? {} : { path: operation.params }),
      ...(operation.query === undefined ? {} : { query: operation.query }),
    },
    ...(changes
      ? { parameters: acceptsCookie(operation) ? [idempotencyKey, csrfToken] : [idempotencyKey] }
      : {}),
    ...(operation.body === undefined ? {} : { requestBody: requestBodyOf(operation) }),
    responses: {
      [String(operation.success.status)]: {
        description: operation.success.description,
        ...withHeaders(headersOf(operation, operation.success.status, operation.success.headers)),
        content: {
          [operation.success.mediaType ?? "application/json"]: {
            schema: operation.success.schema,
            ...streamItems(operation),
            ...examplesOf(operation.success.example),
          },
        },
      },
      ...errorResponses(operation),
    },
  };
}

/** Every operation's tag, described, in the order a reader meets them. */
const tags: { name: Operation["tag"]; description: string }[] = [
  { name: "Destinations", description: "The https:// URLs that receive a workspace's events." },
  { name: "Events", description: "Publishing notifications, and reading them back." },
  {
    name: "Deliveries",
    description:
      "Each notification's delivery to each destination: its attempts, retry and recovery.",
  },
  {
    name: "Listen",
    description: "Listen sessions: what `svc listen` forwards to a local receiver from.",
  },
  { name: "Sign-in", description: "Sessions for users, by token or by the dashboard's cookie." },
  { name: "Workspaces", description: "A platform's workspaces, managed with an operator key." },
  {
    name: "API keys",
    description: "A workspace's API keys, minted and revoked with an operator key.",
  },
  { name: "Portal", description: "The embeddable customer portal's links and sessions." },
];

/** The document; built once per process (it does not change while it runs). */
export function buildOpenApiDocument(): ReturnType<typeof createDocument> {
  const paths: ZodOpenApiPathsObject = {};
  for (const [id, operation] of Object.entries(operations) as [string, Operation][]) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method]: operationObject(id, operation),
    };
  }
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "svc webhook delivery API",
      version: VERSION,
      license: { name: "MIT", identifier: "MIT" },
      // No public address is published yet: the name is what the package.json can back.
      contact: { name: "svc-webhooks maintainers" },
      description:
        'Manage webhook destinations, publish events, and read and repair their delivery. Errors are `{"error":{"code","message","param"?}}`; every code is in docs/errors.md.',
    },
    tags,
    servers: [{ url: "http://127.0.0.1:8787", description: "svc server's default address" }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "An API key (svk_…), a session token (svs_…) from sign-in, an operator key (svc_op_…), or a portal session's token (svp_…).",
        },
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: "svc_session",
          description:
            "The dashboard's session cookie over plain http, set by browser sign-in. A change made with it needs `X-CSRF-Token`.",
        },
        secureSessionCookie: {
          type: "apiKey",
          in: "cookie",
          name: "__Host-svc_session",
          description:
            "The dashboard's session cookie over TLS (or with `behindTls`), set by browser sign-in. A change made with it needs `X-CSRF-Token`.",
        },
      },
    },
    paths,
  });
}
