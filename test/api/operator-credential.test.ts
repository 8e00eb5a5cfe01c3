import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { accessConfig, type Operation } from "../../src/contract/operations.ts";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import { z } from "zod";
import { testDatabaseEnv, testDatabaseLocation } from "../support/database.ts";
import {
  inProcessApi,
  publicTestHost,
  signInAs,
  type InProcessApi,
} from "../support/in-process-api.ts";
import { runCliInMemory } from "../support/in-memory-cli.ts";
import { tempDir } from "../support/temp.ts";

/** A route that only an operator key with `portal:write` may call, as the portal's will be. */
const operatorOnly: Operation = {
  method: "post",
  path: "/v1/test-operator-only",
  tag: "Portal",
  summary: "test",
  access: "portal:write",
  success: { status: 200, description: "ok", schema: z.object({}) },
  errors: [],
};

describe("operator API keys (decision 42)", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  let api: InProcessApi;

  before(async () => {
    dir = await tempDir();
    const dataDir = join(dir.path, "data");
    env = { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) };
    api = await inProcessApi({ location: await testDatabaseLocation(dataDir) });
    api.app.post(operatorOnly.path, accessConfig(operatorOnly), () => ({}));
  });
  after(async () => {
    await api.dispose();
    await dir.cleanup();
  });

  /** An operator key made as an operator makes one, with these scopes: its token. */
  async function operatorKey(scopes: string): Promise<string> {
    const file = join(dir.path, `operator-${Math.random().toString(36).slice(2)}.key`);
    const run = await runCliInMemory(
      ["admin", "keys", "create", "--operator", "--scopes", scopes, "--output", file, "--json"],
      { env },
    );
    assert.equal(run.status, 0, run.stderr);
    const { data } = JSON.parse(run.stdout) as { data: { workspace_id: null; operator: boolean } };
    assert.equal(data.workspace_id, null);
    assert.equal(data.operator, true);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    return (await readFile(file, "utf8")).trim();
  }

  const call = (token: string, method: "GET" | "POST", url: string, body?: unknown) =>
    api.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it("is made by `svc admin keys create --operator`, its token prefixed svc_op_", async () => {
    const token = await operatorKey("portal:write");
    assert.match(token, /^svc_op_[A-Za-z0-9_-]{43}$/);
    const keys = await api.store.credentials.listApiKeys(null);
    assert.ok(keys.some((key) => key.workspaceId === null && key.scopes.includes("portal:write")));
  });

  it("a workspace's key never begins with the operator prefix", () => {
    for (let i = 0; i < 2000; i += 1) assert.ok(!newApiToken().startsWith("svc_op_"));
  });

  it("refuses operator scopes without --operator, and --operator with --workspace", async () => {
    const file = join(dir.path, "refused.key");
    const withoutOperator = await runCliInMemory(
      ["admin", "keys", "create", "--workspace", api.workspaceId, "--scopes", "workspaces:read"],
      { env: { ...env }, terminal: false },
    );
    assert.equal(withoutOperator.status, 2);
    assert.match(withoutOperator.stderr, /need --operator/);
    const both = await runCliInMemory(
      ["admin", "keys", "create", "--operator", "--workspace", api.workspaceId],
      { env: { ...env } },
    );
    assert.notEqual(both.status, 0);
    await assert.rejects(stat(file), { code: "ENOENT" });
  });

  it("its workspace scopes hold in every workspace there is", async () => {
    const token = await operatorKey("webhooks:write,events:write");
    await api.store.credentials.createWorkspace({ id: "ws_second", name: "second" });
    for (const workspace of [api.workspaceId, "ws_second"]) {
      const created = await call(token, "POST", `/v1/workspaces/${workspace}/webhooks`, {
        url: `https://${publicTestHost}/hooks`,
        events: ["*"],
      });
      assert.equal(created.statusCode, 201, created.body);
      const published = await call(token, "POST", `/v1/workspaces/${workspace}/events`, {
        type: "job.completed",
        data: { object: { id: "job_1" } },
      });
      assert.equal(published.statusCode, 202, published.body);
    }
  });

  it("a workspace that does not exist is refused as any other without access", async () => {
    const token = await operatorKey("webhooks:read");
    const answer = await call(token, "GET", "/v1/workspaces/ws_nowhere/webhooks");
    assert.equal(answer.statusCode, 403);
    assert.equal(answer.json<{ error: { code: string } }>().error.code, "workspace_forbidden");
  });

  it("without a workspace scope it does nothing in a workspace", async () => {
    const token = await operatorKey("workspaces:write,portal:write");
    const answer = await call(token, "GET", `/v1/workspaces/${api.workspaceId}/webhooks`);
    assert.equal(answer.statusCode, 403);
    assert.equal(answer.json<{ error: { code: string } }>().error.code, "insufficient_scope");
  });

  it("an operator route takes an operator key with the scope, and no other credential", async () => {
    const code = (answer: { body: string }) =>
      (JSON.parse(answer.body) as { error: { code: string } }).error.code;
    const allowed = await call(await operatorKey("portal:write"), "POST", operatorOnly.path);
    assert.equal(allowed.statusCode, 200, allowed.body);

    const withoutScope = await call(
      await operatorKey("workspaces:write"),
      "POST",
      operatorOnly.path,
    );
    assert.equal(withoutScope.statusCode, 403);
    assert.equal(code(withoutScope), "insufficient_scope");

    const workspaceKey = await call(api.token, "POST", operatorOnly.path);
    assert.equal(workspaceKey.statusCode, 403);
    assert.equal(code(workspaceKey), "operator_key_required");

    const session = await signInAs(api, "owner");
    const bySession = await call(session.token, "POST", operatorOnly.path);
    assert.equal(bySession.statusCode, 403);
    assert.equal(code(bySession), "operator_key_required");
  });

  it("an expired key is refused at authentication, as a revoked one", async () => {
    const token = newApiToken();
    await api.store.credentials.createApiKey({
      id: "key_expired",
      workspaceId: api.workspaceId,
      tokenHash: hashToken(token),
      scopes: ["webhooks:read"],
      expiresAt: new Date(Date.now() - 1000),
    });
    const answer = await call(token, "GET", `/v1/workspaces/${api.workspaceId}/webhooks`);
    assert.equal(answer.statusCode, 401);
  });

  it("`svc admin init` tells how to make one", async () => {
    const other = await tempDir();
    try {
      const dataDir = join(other.path, "data");
      const run = await runCliInMemory(["admin", "init", "--output", join(other.path, "k")], {
        env: { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) },
      });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /svc admin keys create --operator --scopes workspaces:write/);
    } finally {
      await other.cleanup();
    }
  });
});
