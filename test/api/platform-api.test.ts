import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { isOperatorOperation, operations, type Operation } from "../../src/contract/operations.ts";
import { csrfTokenFor } from "../../src/api/auth/cookie-session.ts";
import { hashPassword } from "../../src/crypto/passwords.ts";
import { hashToken, newOperatorToken } from "../../src/crypto/tokens.ts";
import type { KeyScope } from "../../src/interfaces.ts";
import { join } from "node:path";
import type { Database } from "../../src/store/database.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";
import {
  inProcessApi,
  publicTestHost,
  signInAs,
  type InProcessApi,
} from "../support/in-process-api.ts";
import { tracesOf } from "../support/traces.ts";

interface WorkspaceJson {
  id: string;
  name: string;
  external_id: string | null;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

const codeOf = (answer: LightMyRequestResponse): string | undefined =>
  (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;

/** The platform API's rules (decision 42), in process on the test's engine. */
describe("the platform API", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let api: InProcessApi;
  /** The API's database, through a connection of the test's own. */
  let db: Database;
  let operatorToken: string;
  let keys = 0;

  /** An operator key with `scopes`, as `svc admin keys create --operator` records one. */
  const operatorKey = async (scopes: readonly KeyScope[]): Promise<string> => {
    const token = newOperatorToken();
    keys += 1;
    await api.store.credentials.createApiKey({
      id: `key_op${keys}`,
      workspaceId: null,
      tokenHash: hashToken(token),
      scopes,
    });
    return token;
  };

  /** A request as the operator key makes it (or `token`'s). */
  const op = (
    method: "GET" | "POST" | "PATCH" | "DELETE",
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    api.call(method, url, {
      body,
      headers: { authorization: `Bearer ${operatorToken}`, ...headers },
    });

  const create = async (body: Record<string, unknown>): Promise<WorkspaceJson> => {
    const answer = await op("POST", "/v1/workspaces", body);
    assert.equal(answer.statusCode, 201, answer.body);
    return answer.json<WorkspaceJson>();
  };

  before(async () => {
    dir = await tempDir();
    const location = await testDatabaseLocation(join(dir.path, "data"));
    api = await inProcessApi({ location });
    db = openDatabase(location);
    operatorToken = await operatorKey(["workspaces:write", "webhooks:write", "events:write"]);
  });
  after(async () => {
    await db.close();
    await api.dispose();
    await dir.cleanup();
  });

  it("creates, gets, finds by external_id, renames and replaces metadata", async () => {
    const workspace = await create({
      name: "Acme",
      external_id: "cus_1",
      metadata: { plan: "pro" },
    });
    assert.match(workspace.id, /^ws_[0-9a-f]{24}$/);
    assert.deepEqual(
      { name: workspace.name, external_id: workspace.external_id, metadata: workspace.metadata },
      { name: "Acme", external_id: "cus_1", metadata: { plan: "pro" } },
    );
    const got = await op("GET", `/v1/workspaces/${workspace.id}`);
    assert.deepEqual(got.json(), workspace);
    const found = await op("GET", "/v1/workspaces?external_id=cus_1");
    assert.deepEqual(found.json(), { data: [workspace], next_cursor: null });
    const updated = await op("PATCH", `/v1/workspaces/${workspace.id}`, {
      name: "Acme Corp",
      metadata: { tier: "gold" },
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json<WorkspaceJson>().name, "Acme Corp");
    assert.deepEqual(updated.json<WorkspaceJson>().metadata, { tier: "gold" });
    assert.equal(codeOf(await op("PATCH", `/v1/workspaces/${workspace.id}`, {})), "empty_update");
    assert.equal((await op("GET", "/v1/workspaces/ws_unknown")).statusCode, 404);
  });

  it("lists every workspace newest first, a page at a time, to the last", async () => {
    for (let i = 0; i < 5; i += 1) await create({ name: `paged ${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? "" : `&cursor=${cursor}`;
      const page = await op("GET", `/v1/workspaces?limit=2${query}`);
      const body = page.json<{ data: WorkspaceJson[]; next_cursor: string | null }>();
      seen.push(...body.data.map((workspace) => workspace.id));
      cursor = body.next_cursor;
    } while (cursor !== null);
    const all = await api.store.credentials.listWorkspaces();
    assert.deepEqual(seen, all.map((workspace) => workspace.id).reverse());
    assert.equal(codeOf(await op("GET", "/v1/workspaces?cursor=nonsense")), "invalid_cursor");
  });

  it("refuses an external_id another workspace has: 409 external_id_taken", async () => {
    await create({ name: "first", external_id: "cus_taken" });
    const second = await op("POST", "/v1/workspaces", { name: "second", external_id: "cus_taken" });
    assert.equal(second.statusCode, 409);
    assert.equal(codeOf(second), "external_id_taken");
  });

  it("lets one of many creates at once with an external_id win; the others answer 409", async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        op("POST", "/v1/workspaces", { name: `racer ${i}`, external_id: "cus_race" }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409], `on ${testBackend}`);
    const found = await op("GET", "/v1/workspaces?external_id=cus_race");
    assert.equal(found.json<{ data: unknown[] }>().data.length, 1);
  });

  it("refuses input past its bounds, naming the member", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, "name"],
      [{ name: "x", external_id: "e".repeat(256) }, "external_id"],
      [{ name: "x", metadata: { nested: { a: "b" } } }, "metadata.nested"],
      [
        {
          name: "x",
          metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])),
        },
        "metadata",
      ],
      [{ name: "x", metadata: { k: "v".repeat(501) } }, "metadata.k"],
      [{ name: "x", unknown: 1 }, "unknown"],
    ];
    for (const [body, param] of cases) {
      const answer = await op("POST", "/v1/workspaces", body);
      assert.equal(answer.statusCode, 400, JSON.stringify(body));
      assert.equal(answer.json<{ error: { param: string } }>().error.param, param);
    }
  });

  it("replays an idempotent create, and refuses the key for another body", async () => {
    const headers = { "idempotency-key": "create-acme-1" };
    const body = { name: "Idem", external_id: "cus_idem" };
    const first = await op("POST", "/v1/workspaces", body, headers);
    const again = await op("POST", "/v1/workspaces", body, headers);
    assert.equal(first.statusCode, 201);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers["idempotent-replayed"], "true");
    assert.equal(again.body, first.body);
    const other = await op("POST", "/v1/workspaces", { ...body, name: "Other" }, headers);
    assert.equal(codeOf(other), "idempotency_error");
  });

  it("mints a key whose token is shown once, lists keys without it, and revokes it", async () => {
    const workspace = await create({ name: "keys" });
    const headers = { "idempotency-key": "mint-1" };
    const body = { scopes: ["webhooks:read"], name: "reader" };
    const minted = await op("POST", `/v1/workspaces/${workspace.id}/api-keys`, body, headers);
    assert.equal(minted.statusCode, 201, minted.body);
    const replayed = await op("POST", `/v1/workspaces/${workspace.id}/api-keys`, body, headers);
    assert.equal(replayed.body, minted.body, "a replay is the same key, not a second one");
    const key = minted.json<{ id: string; token: string; expires_at: string | null }>();
    assert.match(key.token, /^svc_/);
    const reading = await api.call("GET", `/v1/workspaces/${workspace.id}/webhooks`, {
      headers: { authorization: `Bearer ${key.token}` },
    });
    assert.equal(reading.statusCode, 200);

    const listed = await op("GET", `/v1/workspaces/${workspace.id}/api-keys`);
    const [entry, ...rest] = listed.json<{ data: Record<string, unknown>[] }>().data;
    assert.equal(rest.length, 0);
    assert.deepEqual(Object.keys(entry ?? {}).sort(), [
      "created_at",
      "expires_at",
      "id",
      "last_used_at",
      "name",
      "scopes",
    ]);
    assert.ok(!listed.body.includes(key.token) && !listed.body.includes(hashToken(key.token)));

    const revoked = await op("DELETE", `/v1/workspaces/${workspace.id}/api-keys/${key.id}`);
    assert.deepEqual(revoked.json(), { id: key.id, deleted: true });
    const refused = await api.call("GET", `/v1/workspaces/${workspace.id}/webhooks`, {
      headers: { authorization: `Bearer ${key.token}` },
    });
    assert.equal(refused.statusCode, 401);
    const again = await op("DELETE", `/v1/workspaces/${workspace.id}/api-keys/${key.id}`);
    assert.equal(again.statusCode, 404);
  });

  it("refuses operator scopes and past expiries in a minted key; an expired key is refused", async () => {
    const workspace = await create({ name: "expiry" });
    const path = `/v1/workspaces/${workspace.id}/api-keys`;
    const operatorScope = await op("POST", path, { scopes: ["workspaces:write"] });
    assert.equal(operatorScope.statusCode, 400);
    const past = await op("POST", path, {
      scopes: ["webhooks:read"],
      expires_at: "2001-01-01T00:00:00Z",
    });
    assert.equal(codeOf(past), "invalid_request");
    const soon = new Date(Date.now() + 60_000);
    const minted = await op("POST", path, {
      scopes: ["webhooks:read"],
      expires_at: soon.toISOString(),
    });
    assert.equal(minted.json<{ expires_at: string }>().expires_at, soon.toISOString());
    const key = minted.json<{ id: string }>();
    assert.equal(
      (await op("POST", `/v1/workspaces/ws_nowhere/api-keys`, { scopes: ["webhooks:read"] }))
        .statusCode,
      404,
    );
    assert.ok(key.id.startsWith("key_"));
  });

  it("refuses to delete a workspace with destinations unless cascade=true, which leaves nothing of it", async () => {
    const workspace = await create({ name: "doomed", external_id: "cus_doomed" });
    const ws = workspace.id;
    const minted = await op(
      "POST",
      `/v1/workspaces/${ws}/api-keys`,
      { scopes: ["events:write"] },
      { "idempotency-key": "doomed-key" },
    );
    const destination = await op("POST", `/v1/workspaces/${ws}/webhooks`, {
      url: `https://${publicTestHost}/hooks`,
    });
    assert.equal(destination.statusCode, 201, destination.body);
    const event = await op("POST", `/v1/workspaces/${ws}/events`, {
      type: "job.completed",
      data: { object: { id: "job_1" } },
    });
    assert.equal(event.statusCode, 202, event.body);
    const listen = await op("POST", `/v1/workspaces/${ws}/listen-sessions`, { events: ["*"] });
    assert.equal(listen.statusCode, 200, listen.body);
    // A user of this workspace alone, signed in, and one who is a member elsewhere too.
    const passwordHash = await hashPassword("correct horse battery staple");
    await api.store.credentials.createUser(
      { id: "usr_doomed", email: "doomed@example.com", passwordHash },
      { workspaceId: ws, role: "member" },
    );
    const stays = await signInAs(api, "viewer", "stays@example.com");
    const staysUser = await api.store.credentials.findUserByEmail("stays@example.com");
    await api.store.credentials.putMembership(staysUser?.id ?? "", ws, "viewer");
    const signedIn = await api.app.inject({
      method: "POST",
      url: "/v1/auth/sessions",
      payload: { email: "doomed@example.com", password: "correct horse battery staple" },
    });
    assert.equal(signedIn.statusCode, 201);

    const refused = await op("DELETE", `/v1/workspaces/${ws}`);
    assert.equal(refused.statusCode, 409);
    assert.equal(codeOf(refused), "workspace_not_empty");

    const needles = [
      ws,
      "cus_doomed",
      "usr_doomed",
      minted.json<{ id: string }>().id,
      destination.json<{ id: string }>().id,
      event.json<{ id: string }>().id,
      listen.json<{ id: string }>().id,
    ];
    const before = await tracesOf(db, needles);
    assert.ok(before.length >= needles.length, before.join("\n"));

    const deleted = await op("DELETE", `/v1/workspaces/${ws}?cascade=true`);
    assert.deepEqual(deleted.json(), { id: ws, deleted: true });
    assert.deepEqual(await tracesOf(db, needles), []);
    // The member of another workspace keeps their account and their session.
    const whoAmI = await api.call("GET", "/v1/auth/session", {
      headers: { authorization: `Bearer ${stays.token}` },
    });
    assert.equal(whoAmI.statusCode, 200);
    assert.equal((await op("DELETE", `/v1/workspaces/${ws}`)).statusCode, 404);
  });

  it("deletes an empty workspace without cascade", async () => {
    const workspace = await create({ name: "empty" });
    const deleted = await op("DELETE", `/v1/workspaces/${workspace.id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
  });

  describe("every operator route refuses every other credential", () => {
    const operatorOperations = Object.entries(operations).filter(([, operation]) =>
      isOperatorOperation(operation),
    ) as [string, Operation][];

    const pathOf = (operation: Operation, ws: string) =>
      operation.path.replace("{workspace}", ws).replace("{id}", "key_none");

    it("covers the platform API's operations", () => {
      assert.ok(operatorOperations.length >= 8, operatorOperations.map(([id]) => id).join());
    });

    it("a workspace key, a session by bearer and by cookie: 403 operator_key_required; an operator key without the scope: 403 insufficient_scope", async () => {
      const session = await signInAs(api, "owner");
      const cookieName = "svc_session";
      const noScope = await operatorKey(["webhooks:write", "events:write"]);
      const readOnly = await operatorKey(["workspaces:read"]);
      for (const [id, operation] of operatorOperations) {
        const url = pathOf(operation, api.workspaceId);
        const method = operation.method.toUpperCase() as "GET";
        const body = operation.body === undefined ? undefined : {};
        const tries: [string, Record<string, string>, string][] = [
          ["workspace key", { authorization: `Bearer ${api.token}` }, "operator_key_required"],
          ["session", { authorization: `Bearer ${session.token}` }, "operator_key_required"],
          [
            "cookie",
            {
              authorization: "",
              cookie: `${cookieName}=${session.token}`,
              "x-csrf-token": csrfTokenFor(session.token),
            },
            "operator_key_required",
          ],
          ["scope-less operator key", { authorization: `Bearer ${noScope}` }, "insufficient_scope"],
        ];
        if (operation.access === "workspaces:write" || operation.access === "portal:write") {
          tries.push([
            "read-only operator key",
            { authorization: `Bearer ${readOnly}` },
            "insufficient_scope",
          ]);
        }
        for (const [who, headers, code] of tries) {
          if (headers.authorization === "") delete headers.authorization;
          const answer = await api.app.inject({
            method,
            url,
            headers: {
              ...headers,
              ...(body === undefined ? {} : { "content-type": "application/json" }),
            },
            ...(body === undefined ? {} : { payload: "{}" }),
          });
          assert.equal(answer.statusCode, 403, `${id} by ${who}: ${answer.body}`);
          assert.equal(codeOf(answer), code, `${id} by ${who}`);
        }
      }
    });
  });
});
