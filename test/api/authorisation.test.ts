import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson, type ErrorJson } from "../support/api.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createKey, createWorkspace } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";

describe("API keys, scopes and workspaces", () => {
  let fixture: ServerFixture;
  let base: string;
  let existing: DestinationJson;

  before(async () => {
    fixture = await serverFixture();
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
    const created = await apiClient(fixture.server.url, fixture.owner.key).post<DestinationJson>(
      base,
      { url: "https://public.example.test/" },
    );
    existing = created.body;
  });
  after(() => fixture.dispose());

  it("a request without credentials is 401 unauthenticated, naming Bearer (RFC 9110)", async () => {
    const response = await apiClient(fixture.server.url, null).get<ErrorJson>(base);
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, "unauthenticated");
    assert.equal(response.headers.get("www-authenticate"), "Bearer");
  });

  it("an unknown key is 401, naming Bearer", async () => {
    const response = await apiClient(fixture.server.url, "svc_not-a-real-key").get<ErrorJson>(base);
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, "unauthenticated");
    assert.equal(response.headers.get("www-authenticate"), "Bearer");
  });

  it("a read-only key lists and gets but cannot create, update or delete", async () => {
    const token = await createKey(fixture.server, fixture.owner.id, "webhooks:read");
    const reader = apiClient(fixture.server.url, token);
    assert.equal((await reader.get(base)).status, 200);
    assert.equal((await reader.get(`${base}/${existing.id}`)).status, 200);
    for (const response of [
      await reader.post<ErrorJson>(base, { url: "https://public.example.test/" }),
      await reader.patch<ErrorJson>(`${base}/${existing.id}`, { active: false }),
      await reader.delete<ErrorJson>(`${base}/${existing.id}`),
    ]) {
      assert.equal(response.status, 403);
      assert.equal(response.body.error.code, "insufficient_scope");
    }
    const after = await reader.get<DestinationJson>(`${base}/${existing.id}`);
    assert.equal(after.body.active, true, "the refused update changed nothing");
  });

  it("webhooks:write implies webhooks:read", async () => {
    const token = await createKey(fixture.server, fixture.owner.id, "webhooks:write");
    assert.equal((await apiClient(fixture.server.url, token).get(base)).status, 200);
  });

  it("a key with only event scopes cannot read destinations", async () => {
    const token = await createKey(fixture.server, fixture.owner.id, "events:read,events:write");
    const response = await apiClient(fixture.server.url, token).get<ErrorJson>(base);
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, "insufficient_scope");
  });

  it("a workspace the key has no access to is 403, whatever id is asked for", async () => {
    const other = await createWorkspace(fixture.server);
    const outsider = apiClient(fixture.server.url, other.key);
    for (const response of [
      await outsider.get<ErrorJson>(base),
      await outsider.get<ErrorJson>(`${base}/${existing.id}`),
      await outsider.get<ErrorJson>(`${base}/dst_doesnotexist`),
      await outsider.post<ErrorJson>(base, { url: "https://public.example.test/" }),
      await outsider.patch<ErrorJson>(`${base}/${existing.id}`, { active: false }),
      await outsider.delete<ErrorJson>(`${base}/${existing.id}`),
    ]) {
      assert.equal(response.status, 403);
      assert.equal(response.body.error.code, "workspace_forbidden");
    }
  });

  it("a revoked key is refused at once", async () => {
    const keyFile = `${fixture.dir}/revoke-me.key`;
    const created = await runSvc(
      [
        "admin",
        "keys",
        "create",
        "--workspace",
        fixture.owner.id,
        "--scopes",
        "webhooks:read",
        "--output",
        keyFile,
        "--json",
      ],
      { env: fixture.server.env },
    );
    assert.equal(created.code, 0, created.stderr);
    const keyId = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
    const { readFile } = await import("node:fs/promises");
    const client = apiClient(fixture.server.url, (await readFile(keyFile, "utf8")).trim());
    assert.equal((await client.get(base)).status, 200);

    const revoked = await runSvc(["admin", "keys", "revoke", keyId], { env: fixture.server.env });
    assert.equal(revoked.code, 0, revoked.stderr);
    const response = await client.get<ErrorJson>(base);
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, "unauthenticated");
  });
});
