import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildOpenApiDocument, errorsOf } from "../../src/contract/openapi.ts";
import { operations, routePath, type Operation } from "../../src/contract/operations.ts";
import { errorCatalog } from "../../src/errors.ts";
import { inProcessApi, type InProcessApi } from "../support/in-process-api.ts";
import { assertEnvelope } from "../support/envelope.ts";
import { checkAnswer } from "../support/openapi-check.ts";

const referencePath = new URL("../../../docs/openapi.json", import.meta.url);

/** The OpenAPI document (decision 31): valid, whole, served, and kept in docs/. */
describe("the OpenAPI document", () => {
  let api: InProcessApi;

  before(async () => {
    api = await inProcessApi();
  });
  after(() => api.dispose());

  it("is a valid OpenAPI 3.1 document, by an independent validator", async () => {
    const document = JSON.parse(JSON.stringify(buildOpenApiDocument())) as Record<string, unknown>;
    const result = await new Validator().validate(document);
    assert.deepEqual(result, { valid: true });
    assert.equal(buildOpenApiDocument().openapi, "3.1.0");
  });

  it("has every /v1 route of the API, and nothing the API does not serve", async () => {
    // Fastify lists its routes as a tree (`printRoutes`): each line's depth is where its
    // branch mark stands, and its path continues its parent's. Fastify's own HEAD is left out.
    await api.app.ready();
    const served = new Set<string>();
    const stack: string[] = [];
    for (const line of api.app.printRoutes({ commonPrefix: false }).split("\n")) {
      const match = /^([│ ]*)[├└]── (\S+) \((.+)\)$/.exec(line);
      if (match?.[1] === undefined || match[2] === undefined || match[3] === undefined) continue;
      const depth = match[1].length / 4;
      stack.length = depth;
      const path = `${stack.join("")}${match[2]}`;
      stack.push(match[2]);
      for (const method of match[3].split(", ")) {
        if (method !== "HEAD") served.add(`${method} ${path}`);
      }
    }
    const v1 = [...served].filter((route) => route.split(" ")[1]?.startsWith("/v1/"));
    const documented = (Object.values(operations) as Operation[]).map(
      (operation) => `${operation.method.toUpperCase()} ${routePath(operation)}`,
    );
    assert.deepEqual(v1.sort(), [...documented].sort());
    const paths = buildOpenApiDocument().paths ?? {};
    for (const operation of Object.values(operations) as Operation[]) {
      assert.ok(paths[operation.path]?.[operation.method], `${operation.path} is documented`);
    }
  });

  it("declares each operation's refusals by status, every code from the catalog", () => {
    const paths = buildOpenApiDocument().paths ?? {};
    for (const operation of Object.values(operations) as Operation[]) {
      const responses = paths[operation.path]?.[operation.method]?.responses ?? {};
      for (const code of errorsOf(operation)) {
        const status = String(errorCatalog[code].status);
        const described = (responses[status] as { description?: string } | undefined)?.description;
        assert.ok(described?.includes(`\`${code}\``), `${operation.path} ${status} names ${code}`);
      }
      assert.ok(responses.default, `${operation.path} has a default error response`);
    }
  });

  it("types limit as an integer with its bounds, which the server reads strictly", async () => {
    const paths = buildOpenApiDocument().paths ?? {};
    const parameters = paths["/v1/workspaces/{workspace}/webhooks"]?.get?.parameters ?? [];
    const limit = parameters.find((parameter) => "name" in parameter && parameter.name === "limit");
    assert.deepEqual((limit as { schema?: unknown } | undefined)?.schema, {
      description: "Items per page, 1 to 100.",
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 20,
      examples: [20],
    });
    assert.equal((await api.call("GET", "/webhooks?limit=20")).statusCode, 200);
    for (const text of ["20abc", "0", "500", "-1", "+5", "1e1", "0x10", " 5", ""]) {
      const query = `/webhooks?limit=${encodeURIComponent(text)}`;
      const error = assertEnvelope(await api.call("GET", query), "invalid_request", query);
      assert.equal(error.param, "limit", query);
    }
  });

  it("declares the headers the server sends", () => {
    const document = JSON.parse(JSON.stringify(buildOpenApiDocument())) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const headers = (path: string, method: string, status: string): string[] =>
      Object.keys(document.paths[path]?.[method]?.responses[status]?.headers ?? {});
    assert.ok(headers("/v1/auth/sessions", "post", "429").includes("Retry-After"));
    assert.ok(headers("/v1/workspaces/{workspace}/events", "post", "503").includes("Retry-After"));
    assert.ok(
      headers("/v1/workspaces/{workspace}/events", "get", "401").includes("WWW-Authenticate"),
    );
    assert.ok(
      headers("/v1/workspaces/{workspace}/events", "post", "202").includes("Idempotent-Replayed"),
    );
    assert.ok(headers("/v1/auth/browser-sessions", "post", "201").includes("Set-Cookie"));
    assert.ok(headers("/v1/auth/session", "delete", "200").includes("Set-Cookie"));
  });

  it("is served at GET /openapi.json without credentials", async () => {
    const response = await api.app.inject({ method: "GET", url: "/openapi.json" });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers["content-type"]), /^application\/json/);
    assert.deepEqual(response.json(), buildOpenApiDocument());
  });

  it("is the same as docs/openapi.json (regenerate it with npm run docs:openapi)", async () => {
    const reference = JSON.parse(await readFile(referencePath, "utf8")) as unknown;
    assert.deepEqual(reference, JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it("is what every answer in the suite is checked against, and the check can fail", () => {
    const member = "/v1/workspaces/ws_1/webhooks/dst_1";
    const good = {
      id: "dst_1",
      url: "https://example.com/hooks",
      events: ["*"],
      active: true,
      created_at: "2026-11-25T12:00:00.000Z",
      updated_at: "2026-11-25T12:00:00.000Z",
    };
    checkAnswer("PATCH", member, 200, JSON.stringify(good));
    assert.throws(() => {
      checkAnswer("PATCH", member, 200, JSON.stringify({ ...good, active: "yes" }));
    }, /does not match/);
    assert.throws(() => {
      checkAnswer("PATCH", member, 200, JSON.stringify({ ...good, secret: "whsec_x" }));
    }, /does not match/);
    assert.throws(() => {
      checkAnswer("PATCH", member, 200, JSON.stringify({ ...good, created_at: "yesterday" }));
    }, /does not match/);
    assert.throws(() => {
      checkAnswer("PATCH", member, 204, "");
    }, /declares no 204/);
    assert.throws(() => {
      checkAnswer("GET", "/v1/nowhere", 200, "{}");
    }, /no such operation/);
    const refusal = { error: { code: "route_not_found", message: "No such route." } };
    checkAnswer("GET", "/v1/nowhere", 404, JSON.stringify(refusal));
    assert.throws(() => {
      checkAnswer("GET", member, 404, JSON.stringify({ error: { code: "made_up", message: "" } }));
    }, /does not match/);
  });
});
