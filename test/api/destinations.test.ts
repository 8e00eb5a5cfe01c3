import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient, type ApiClient, type DestinationJson, type ErrorJson } from "../support/api.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace } from "../support/server.ts";

const publicUrl = "https://public.example.test/hooks";

describe("destinations API", () => {
  let fixture: ServerFixture;
  let api: ApiClient;
  let base: string;

  before(async () => {
    fixture = await serverFixture();
    api = apiClient(fixture.server.url, fixture.owner.key);
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
  });
  after(() => fixture.dispose());

  const create = async (body: object): Promise<DestinationJson> => {
    const response = await api.post<DestinationJson>(base, body);
    assert.equal(response.status, 201, response.text);
    return response.body;
  };

  it("creates an active destination subscribed to * by default, returning a whsec_ secret once", async () => {
    const created = await create({ url: publicUrl });
    assert.match(created.id, /^dst_/);
    assert.equal(created.url, publicUrl);
    assert.deepEqual(created.events, ["*"]);
    assert.equal(created.active, true);
    assert.match(created.secret ?? "", /^whsec_[A-Za-z0-9_-]{43,}$/);
    assert.ok(!Number.isNaN(Date.parse(created.created_at)));
    assert.equal(created.created_at, created.updated_at);
  });

  it("keeps the events given, in order, without duplicates", async () => {
    const created = await create({
      url: publicUrl,
      events: ["job.failed", "job.completed", "job.failed"],
    });
    assert.deepEqual(created.events, ["job.failed", "job.completed"]);
  });

  it("rejects an undefined event name, naming it", async () => {
    const response = await api.post<ErrorJson>(base, { url: publicUrl, events: ["job.started"] });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, "invalid_events");
    assert.match(response.body.error.message, /job\.started/);
  });

  it("rejects an empty events list", async () => {
    const response = await api.post<ErrorJson>(base, { url: publicUrl, events: [] });
    assert.equal(response.body.error.code, "invalid_events");
  });

  it("rejects a create without url, and unknown members", async () => {
    assert.equal((await api.post<ErrorJson>(base, {})).body.error.code, "invalid_url");
    const unknown = await api.post<ErrorJson>(base, { url: publicUrl, secret: "mine" });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, "invalid_request");
    assert.equal(unknown.body.error.param, "secret");
  });

  it("rejects malformed JSON with invalid_json", async () => {
    const response = await api.post<ErrorJson>(base, '{"url": ');
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, "invalid_json");
  });

  it("get returns the configuration and last_delivery null, and never the secret", async () => {
    const created = await create({ url: publicUrl, events: ["job.completed"] });
    const response = await api.get<DestinationJson>(`${base}/${created.id}`);
    assert.equal(response.status, 200);
    const { secret, ...withoutSecret } = created;
    assert.deepEqual(response.body, {
      ...withoutSecret,
      last_delivery: null,
      circuit: { state: "closed", open_until: null, opens: 0, reason: null },
    });
    assert.ok(secret !== undefined && !response.text.includes(secret));
    assert.ok(!("secret" in response.body));
  });

  it("list shows id, url, events, active and both timestamps, and never a secret", async () => {
    const created = await create({ url: publicUrl });
    const response = await api.get<{ data: DestinationJson[] }>(base);
    assert.equal(response.status, 200);
    const listed = response.body.data.find((item) => item.id === created.id);
    assert.deepEqual(Object.keys(listed ?? {}).sort(), [
      "active",
      "created_at",
      "events",
      "id",
      "updated_at",
      "url",
    ]);
    assert.ok(created.secret !== undefined && !response.text.includes(created.secret));
    assert.doesNotMatch(response.text, /whsec_/);
  });

  it("update changes only the supplied fields and moves updated_at", async () => {
    const created = await create({ url: publicUrl, events: ["job.completed"] });
    const deactivated = await api.patch<DestinationJson>(`${base}/${created.id}`, {
      active: false,
    });
    assert.equal(deactivated.status, 200);
    assert.equal(deactivated.body.active, false);
    assert.equal(deactivated.body.url, publicUrl);
    assert.deepEqual(deactivated.body.events, ["job.completed"]);
    assert.equal(deactivated.body.created_at, created.created_at);
    assert.ok(deactivated.body.updated_at >= created.updated_at);

    const changed = await api.patch<DestinationJson>(`${base}/${created.id}`, {
      url: "https://dual.example.test/other",
      events: ["collection.completed", "job.failed"],
    });
    assert.equal(changed.body.active, false, "active is preserved when not supplied");
    assert.equal(changed.body.url, "https://dual.example.test/other");
    assert.deepEqual(changed.body.events, ["collection.completed", "job.failed"]);

    const reactivated = await api.patch<DestinationJson>(`${base}/${created.id}`, { active: true });
    assert.equal(reactivated.body.active, true);
    assert.deepEqual(reactivated.body.events, ["collection.completed", "job.failed"]);
  });

  it("update rejects {} and a body of only unknown members", async () => {
    const created = await create({ url: publicUrl });
    const empty = await api.patch<ErrorJson>(`${base}/${created.id}`, {});
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, "empty_update");
    const unknown = await api.patch<ErrorJson>(`${base}/${created.id}`, { secret: "x" });
    assert.equal(unknown.body.error.code, "invalid_request");
    const after = await api.get<DestinationJson>(`${base}/${created.id}`);
    assert.equal(after.body.updated_at, created.updated_at, "nothing changed");
  });

  it("update rejects undefined event names and a non-boolean active, changing nothing", async () => {
    const created = await create({ url: publicUrl, events: ["job.failed"] });
    const badEvents = await api.patch<ErrorJson>(`${base}/${created.id}`, { events: ["job.done"] });
    assert.equal(badEvents.body.error.code, "invalid_events");
    const badActive = await api.patch<ErrorJson>(`${base}/${created.id}`, { active: "false" });
    assert.equal(badActive.body.error.code, "invalid_request");
    assert.equal(badActive.body.error.param, "active");
    const after = await api.get<DestinationJson>(`${base}/${created.id}`);
    assert.deepEqual(after.body.events, ["job.failed"]);
    assert.equal(after.body.active, true);
  });

  it("update applies the network policy to a new url", async () => {
    const created = await create({ url: publicUrl });
    const response = await api.patch<ErrorJson>(`${base}/${created.id}`, {
      url: "https://private.example.test/",
    });
    assert.equal(response.body.error.code, "url_not_public");
    assert.equal((await api.get<DestinationJson>(`${base}/${created.id}`)).body.url, publicUrl);
  });

  it("delete answers deleted: true, after which the id is 404 for get, update and delete", async () => {
    const created = await create({ url: publicUrl });
    const deleted = await api.delete(`${base}/${created.id}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { id: created.id, deleted: true });
    for (const response of [
      await api.get<ErrorJson>(`${base}/${created.id}`),
      await api.patch<ErrorJson>(`${base}/${created.id}`, { active: true }),
      await api.delete<ErrorJson>(`${base}/${created.id}`),
    ]) {
      assert.equal(response.status, 404);
      assert.equal(response.body.error.code, "not_found");
    }
    const listed = await api.get<{ data: DestinationJson[] }>(`${base}?limit=100`);
    assert.ok(!listed.body.data.some((item) => item.id === created.id));
  });

  it("an unknown id is 404", async () => {
    const response = await api.get<ErrorJson>(`${base}/dst_000000000000000000000000`);
    assert.equal(response.status, 404);
    assert.equal(response.body.error.code, "not_found");
  });

  it("another workspace's destination is 404 for get, update and delete, and untouched", async () => {
    const other = await createWorkspace(fixture.server);
    const otherApi = apiClient(fixture.server.url, other.key);
    const theirs = await otherApi.post<DestinationJson>(`/v1/workspaces/${other.id}/webhooks`, {
      url: publicUrl,
    });
    assert.equal(theirs.status, 201);
    const path = `${base}/${theirs.body.id}`;
    assert.equal((await api.get(path)).status, 404);
    assert.equal((await api.patch(path, { active: false })).status, 404);
    assert.equal((await api.delete(path)).status, 404);
    const still = await otherApi.get<DestinationJson>(
      `/v1/workspaces/${other.id}/webhooks/${theirs.body.id}`,
    );
    assert.equal(still.status, 200);
    assert.equal(still.body.active, true);
  });
});

describe("destinations list pagination", () => {
  let fixture: ServerFixture;
  let api: ApiClient;
  let base: string;

  before(async () => {
    fixture = await serverFixture();
    api = apiClient(fixture.server.url, fixture.owner.key);
    base = `/v1/workspaces/${fixture.owner.id}/webhooks`;
  });
  after(() => fixture.dispose());

  it("walks every destination exactly once, newest first, across pages", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 7; index += 1) {
      const response = await api.post<DestinationJson>(base, { url: `${publicUrl}/${index}` });
      ids.push(response.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? "?limit=3" : `?limit=3&cursor=${cursor}`;
      const page = await api.get<{ data: DestinationJson[]; next_cursor: string | null }>(
        `${base}${query}`,
      );
      assert.equal(page.status, 200);
      assert.ok(page.body.data.length <= 3);
      seen.push(...page.body.data.map((item) => item.id));
      cursor = page.body.next_cursor;
      pages += 1;
      // A destination created while paging must not shift the pages already given.
      if (pages === 1) await api.post(base, { url: `${publicUrl}/late` });
    } while (cursor !== null);
    assert.equal(pages, 3);
    assert.deepEqual(seen, ids.reverse());
  });

  it("rejects a malformed cursor and an out-of-range limit", async () => {
    const cursor = await api.get<ErrorJson>(`${base}?cursor=not-a-cursor`);
    assert.equal(cursor.status, 400);
    assert.equal(cursor.body.error.code, "invalid_cursor");
    for (const limit of ["0", "101", "abc"]) {
      const response = await api.get<ErrorJson>(`${base}?limit=${limit}`);
      assert.equal(response.status, 400, `limit=${limit}`);
      assert.equal(response.body.error.param, "limit");
    }
  });
});
