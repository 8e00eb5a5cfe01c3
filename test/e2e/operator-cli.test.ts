import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit, envelope } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { runSvc } from "../support/svc.ts";

/**
 * The built `svc` against a real `svc server`: an operator key made on the host, then the
 * remote commands provision a tenant whose key works with `svc webhooks` (decision 42).
 */
describe("the operator's CLI, end to end", () => {
  let fixture: ServerFixture;
  let operatorKey: string;

  before(async () => {
    fixture = await serverFixture();
    const keyFile = join(fixture.dir, "operator.key");
    const made = await runSvc(
      [
        "admin",
        "keys",
        "create",
        "--operator",
        "--scopes",
        "workspaces:write",
        "--output",
        keyFile,
      ],
      { env: fixture.server.env },
    );
    assertExit(made, 0);
    operatorKey = (await readFile(keyFile, "utf8")).trim();
  });
  after(() => fixture.dispose());

  const remote = (args: readonly string[], key = operatorKey) =>
    runSvc(args, { env: { SERVICE_API_URL: fixture.server.url, SERVICE_API_KEY: key } });

  it("creates a workspace, mints its key, the key works, then everything is deleted", async () => {
    const created = await remote(["workspaces", "create", "--name", "Acme", "--field", "id"]);
    assertExit(created, 0);
    const workspace = created.stdout.trim();
    assert.match(workspace, /^ws_/);

    const keyFile = join(fixture.dir, "acme.key");
    const minted = await remote([
      "keys",
      "create",
      "--workspace",
      workspace,
      "--scopes",
      "webhooks:read,webhooks:write",
      "--output",
      keyFile,
    ]);
    assertExit(minted, 0);
    const token = (await readFile(keyFile, "utf8")).trim();
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.ok(!minted.stdout.includes(token) && !minted.stderr.includes(token));

    const asTenant = await remote(["webhooks", "list", "--workspace", workspace, "--json"], token);
    assertExit(asTenant, 0);
    assert.deepEqual(envelope(asTenant).data, []);
    const refused = await remote(["workspaces", "list"], token);
    assertExit(refused, 4);
    assert.match(refused.stderr, /\(operator_key_required\)/);

    assertExit(await remote(["workspaces", "delete", workspace, "--cascade", "--yes"]), 0);
    const gone = await remote(["webhooks", "list", "--workspace", workspace], token);
    assertExit(gone, 4);
  });
});
