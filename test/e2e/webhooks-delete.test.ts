import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import {
  assertExit,
  envelope,
  listedDestinations,
  registerDirectly,
  svcAgainst,
} from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace } from "../support/server.ts";
import type { SvcRun, SvcRunOptions } from "../support/svc.ts";

const url = "https://public.example.test/hooks";

describe("svc webhooks delete", () => {
  let fixture: ServerFixture;
  let svc: (args: readonly string[], options?: SvcRunOptions) => Promise<SvcRun>;

  before(async () => {
    fixture = await serverFixture();
    svc = svcAgainst(fixture);
  });
  after(() => fixture.dispose());

  const exists = async (id: string): Promise<boolean> => {
    const ids = (await listedDestinations(fixture)).map((item) => item.id);
    return ids.includes(id);
  };

  it("without a terminal and without --yes it refuses and deletes nothing (SPEC 4.6, 7)", async () => {
    const created = await registerDirectly(fixture, { url });
    const run = await svc(["webhooks", "delete", created.id], { input: "y\n" });
    assertExit(run, 2);
    assert.match(
      run.stderr,
      /^error: Not deleting dst_\w+: there is no terminal to confirm on\. Pass --yes to delete it\. \(confirmation_required\)\n$/,
    );
    assert.equal(run.stdout, "");
    assert.ok(await exists(created.id), "still there");
  });

  it("with --yes it deletes and prints deleted: true (SPEC 3.1, 4.6)", async () => {
    const created = await registerDirectly(fixture, { url });
    const run = await svc(["webhooks", "delete", created.id, "--yes"]);
    assertExit(run, 0);
    assert.match(run.stdout, /^deleted: true$/m);
    assert.match(run.stdout, new RegExp(`^id: +${created.id}$`, "m"));
    assert.ok(!(await exists(created.id)));
  });

  it("-y is --yes, and --json prints {ok, data: {id, deleted: true}}", async () => {
    const created = await registerDirectly(fixture, { url });
    const run = await svc(["webhooks", "delete", created.id, "-y", "--json"]);
    assertExit(run, 0);
    assert.deepEqual(envelope(run), { ok: true, data: { id: created.id, deleted: true } });
  });

  it("a deleted destination cannot be retrieved and is no longer listed (SPEC 3.1)", async () => {
    const created = await registerDirectly(fixture, { url });
    assertExit(await svc(["webhooks", "delete", created.id, "--yes"]), 0);
    const get = await svc(["webhooks", "get", created.id]);
    assertExit(get, 5);
    assert.match(get.stderr, /\(not_found\)/);
    const list = await svc(["webhooks", "list", "--page-all", "--field", "id"]);
    assert.ok(!list.stdout.includes(created.id));
    const again = await svc(["webhooks", "delete", created.id, "--yes"]);
    assertExit(again, 5);
  });

  it("another workspace's destination cannot be deleted: exit 5, and it remains (SPEC 1.3)", async () => {
    const other = await createWorkspace(fixture.server);
    const theirs = await registerDirectly(fixture, { url }, other);
    const run = await svc(["webhooks", "delete", theirs.id, "--yes"]);
    assertExit(run, 5);
    const still = await apiClient(fixture.server.url, other.key).get(
      `/v1/workspaces/${other.id}/webhooks/${theirs.id}`,
    );
    assert.equal(still.status, 200);
  });
});
