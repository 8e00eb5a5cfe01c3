import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from "zod-openapi";
import { errorCatalog, type ErrorCode, type ErrorDefinition } from "../errors.ts";
import { VERSION } from "../version.ts";
import { errorSchema } from "./common.ts";
import {
  bodyErrors,
  changeErrors,
  cookieChangeErrors,
  commonErrors,
  isOperatorOperation,
  operations,
  operatorErrors,
  workspaceErrors,
  type Operation,
} from "./operations.ts";

/**
 * The OpenAPI 3.1 document of every `/v1` operation, made from `operations` (decision 31):
 * served at `GET /openapi.json`, and kept in `docs/openapi.json` (a test holds them equal).
 */

/** Every code an operation may answer with: its own and those every such operation may. */
export function errorsOf(operation: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>([...commonErrors, ...operation.errors]);
  if (isOperatorOperation(operation)) for (const code of operatorErrors) codes.add(code);
  else if (operation.path.includes("{workspace}")) {
    for (const code of workspaceErrors) codes.add(code);
  }
  if (operation.body !== undefined) for (const code of bodyErrors) codes.add(code);
  if (operation.method !== "get") for (const code of changeErrors) codes.add(code);
  if (operation.method !== "get" && operation.access !== "none") {
    for (const code of cookieChangeErrors) codes.add(code);
  }
  return [...codes];
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
    const retryAfter = codes.some((code) => {
      const definition: ErrorDefinition = errorCatalog[code];
      return definition.retryAfterSeconds !== undefined;
    });
    responses[String(status)] = {
      description: codes.map((code) => `\`${code}\`: ${errorCatalog[code].message}`).join("\n\n"),
      ...(retryAfter
        ? {
            headers: {
              "Retry-After": {
                description: "Seconds to wait before trying again.",
                schema: { type: "integer" },
              },
            },
          }
        : {}),
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

const bearer = [{ bearer: [] }];

function operationObject(id: string, operation: Operation): ZodOpenApiOperationObject {
  const changes = operation.method !== "get";
  return {
    operationId: id,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description === undefined ? {} : { description: operation.description }),
    ...(operation.access === "none" ? { security: [] } : { security: bearer }),
    ...(operation.access !== "none" && operation.access !== "credential"
      ? { "x-scope": operation.access }
      : {}),
    requestParams: {
      ...(operation.params === undefined ? {} : { path: operation.params }),
      ...(operation.query === undefined ? {} : { query: operation.query }),
    },
    ...(changes
      ? {
          parameters: [
            {
              in: "header",
              name: "Idempotency-Key",
              required: false,
              description:
                "Makes a retried request safe: the first answer is replayed for 24 hours to the same request with the same key.",
              schema: { type: "string", maxLength: 255 },
            },
          ],
        }
      : {}),
    ...(operation.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: operation.body } },
          },
        }),
    responses: {
      [String(operation.success.status)]: {
        description: operation.success.description,
        content: {
          [operation.success.mediaType ?? "application/json"]: {
            schema: operation.success.schema,
          },
        },
      },
      ...errorResponses(operation),
    },
  };
}

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
      description:
        'Manage webhook destinations, publish events, and read and repair their delivery. Errors are `{"error":{"code","message","param"?}}`; every code is in docs/errors.md.',
    },
    servers: [{ url: "http://127.0.0.1:8787", description: "svc server's default address" }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key (svk_…) or a session token (svs_…) from sign-in.",
        },
      },
    },
    paths,
  });
}
