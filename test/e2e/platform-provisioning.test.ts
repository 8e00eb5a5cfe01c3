import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { openDatabase } from "../../src/store/open-store.ts";
import { apiClient, type ApiClient } from "../support/api.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { deliveryEnv, verifiedTimestamp } from "../support/delivery.ts";
import { eventually } from "../support/eventually.ts";
import { operatorKeyOf, serverFixture, type ServerFixture } from "../support/fixture.ts";
import { always, startReceiver, type Receiver } from "../support/receiver.ts";
import { sharedTestCa } from "../support/tls.ts";
import { tracesOf } from "../support/traces.ts";

interface WorkspaceJson {
  id: string;
  name: string;
  external_id: string | null;
  metadata: Record<string, string>;
}
interface MintedKeyJson {
  id: string;
  token: string;
  scopes: string[];
}

/**
 * The platform API end to end (issue 29, decision 42): a platform's backend, holding one
 * operator key, provisions a tenant over HTTP against a real `svc server`; the tenant's key
 * publishes; a loopback HTTPS receiver verifies the signature; then the tenant goes, and
 * nothing of it is left in any table.
 */
describe("provisioning a tenant over HTTP", () => {
  let fixture: ServerFixture;
  let receiver: Receiver;
  let operator: ApiClient;

  before(async () => {
    const ca = await sharedTestCa();
    fixture = await serverFixture(deliveryEnv(ca));
    receiver = await startReceiver({ ca, respond: always(204) });
    operator = apiClient(
      fixture.server.url,
      await operatorKeyOf(fixture, "workspaces:write,webhooks:write,events:write"),
    );
  });
  after(async () => {
    await receiver.close();
    await fixture.dispose();
  });

  it("creates a workspace by external_id, mints its key, publishes, verifies, revokes and deletes it whole", async (t) => {
    const created = await operator.post<WorkspaceJson>("/v1/workspaces", {
      name: "Acme",
      external_id: "cus_acme",
      metadata: { plan: "pro" },
    });
    assert.equal(created.status, 201, created.text);
    const found = await operator.get<{ data: WorkspaceJson[] }>(
      "/v1/workspaces?external_id=cus_acme",
    );
    assert.deepEqual(
      found.body.data.map((workspace) => workspace.id),
      [created.body.id],
    );
    const ws = created.body.id;

    const minted = await operator.post<MintedKeyJson>(`/v1/workspaces/${ws}/api-keys`, {
      scopes: ["webhooks:write", "events:write"],
      name: "acme backend",
    });
    assert.equal(minted.status, 201, minted.text);
    assert.match(minted.body.token, /^svc_(?!op_)/);
    const tenant = apiClient(fixture.server.url, minted.body.token);

    const destination = await tenant.post<{ id: string; secret: string }>(
      `/v1/workspaces/${ws}/webhooks`,
      { url: `https://hooks.test:${receiver.port}/acme`, events: ["*"] },
    );
    assert.equal(destination.status, 201, destination.text);
    const published = await tenant.post<{ id: string }>(`/v1/workspaces/${ws}/events`, {
      type: "job.completed",
      data: { object: { id: "job_1" } },
    });
    assert.equal(published.status, 202, published.text);
    const [request] = await receiver.waitForRequests(1);
    assert.ok(request);
    assert.equal(request.headers["webhook-id"], published.body.id);
    verifiedTimestamp(request, destination.body.secret);
    await eventually(
      async () => {
        const list = await tenant.get<{ data: { status: string }[] }>(
          `/v1/workspaces/${ws}/deliveries`,
        );
        return list.body.data[0]?.status === "delivered" ? true : undefined;
      },
      { what: "the delivery to be recorded delivered" },
    );

    const revoked = await operator.delete(`/v1/workspaces/${ws}/api-keys/${minted.body.id}`);
    assert.equal(revoked.status, 200, revoked.text);
    const refused = await tenant.get(`/v1/workspaces/${ws}/webhooks`);
    assert.equal(refused.status, 401);

    const db = openDatabase(await testDatabaseLocation(fixture.server.dataDir));
    t.after(() => db.close());
    const needles = [ws, destination.body.id, published.body.id, minted.body.id, "cus_acme"];
    // The search finds each of them before the deletion: its silence after means something.
    assert.equal((await tracesOf(db, needles)).length >= needles.length, true);

    const notEmpty = await operator.delete<{ error: { code: string } }>(`/v1/workspaces/${ws}`);
    assert.equal(notEmpty.status, 409);
    assert.equal(notEmpty.body.error.code, "workspace_not_empty");
    const deleted = await operator.delete(`/v1/workspaces/${ws}?cascade=true`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { id: ws, deleted: true });
    assert.equal((await operator.get(`/v1/workspaces/${ws}`)).status, 404);

    assert.deepEqual(await tracesOf(db, needles), []);
  });
});
