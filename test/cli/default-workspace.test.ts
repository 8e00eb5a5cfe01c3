import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { createUser, type TestUser } from "../support/auth.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { tempDir } from "../support/temp.ts";

/** The `data` of a JSON envelope, of the type the test expects. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
function data<T>(run: CliRun): T {
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as { data: T }).data;
}

describe("a default workspace, kept with the saved credentials (issue 33)", () => {
  let fixture: ServerFixture;
  let other: Workspace;
  /** A member of the first workspace and a viewer of the other: two workspaces, none implied. */
  let user: TestUser;
  let config: { path: string; cleanup: () => Promise<void> };

  before(async () => {
    fixture = await serverFixture();
    other = await createWorkspace(fixture.server);
    user = await createUser(fixture.server, fixture.owner.id, "member");
    await createUser(fixture.server, other.id, "viewer", user.email);
  });
  beforeEach(async () => {
    config = await tempDir();
  });
  afterEach(() => config.cleanup());
  after(() => fixture.dispose());

  /** `svc` in this process, with this test's configuration directory and the server's URL. */
  const svc = (args: readonly string[], env: NodeJS.ProcessEnv = {}, stdin?: string) =>
    runCliInMemory(args, {
      env: { XDG_CONFIG_HOME: config.path, SERVICE_API_URL: fixture.server.url, ...env },
      ...(stdin === undefined ? {} : { stdin }),
    });

  const login = (...extra: string[]) =>
    svc(
      ["auth", "login", "--email", user.email, "--password-stdin", ...extra],
      {},
      `${user.password}\n`,
    );

  /** The workspace a command would act on: the path of the request `--dry-run` shows. */
  const workspaceActedOn = async (args: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const run = await svc(["webhooks", "list", "--dry-run", "--json", ...args], env);
    const { request } = data<{ request: { url: string } }>(run);
    return /\/v1\/workspaces\/([^/]+)\//.exec(request.url)?.[1];
  };

  it("login --workspace saves the default, and commands act on it without naming one", async () => {
    const run = await login("--workspace", other.id);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`Default workspace: ${other.id}`));
    const saved = JSON.parse(
      await readFile(join(config.path, "svc", "credentials.json"), "utf8"),
    ) as { default_workspace: string };
    assert.equal(saved.default_workspace, other.id);
    // A real request too, not only the preview: the viewer lists the other workspace's.
    assert.deepEqual(data(await svc(["webhooks", "list", "--json"])), []);
  });

  it("--workspace wins over SERVICE_WORKSPACE_ID, which wins over the default", async () => {
    assert.equal((await login("--workspace", other.id)).status, 0);
    assert.equal(await workspaceActedOn([]), other.id);
    const env = { SERVICE_WORKSPACE_ID: fixture.owner.id };
    assert.equal(await workspaceActedOn([], env), fixture.owner.id);
    assert.equal(await workspaceActedOn(["--workspace", other.id], env), other.id);
  });

  it("without a default, two workspaces need one named; login says how to choose", async () => {
    const run = await login();
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /No default workspace: choose one with `svc auth switch/);
    const list = await svc(["webhooks", "list"]);
    assert.equal(list.status, 2);
    assert.match(list.stderr, /svc auth switch --workspace <id>.*\(no_workspace\)/);
  });

  it("auth switch --workspace sets the default; auth status shows it", async () => {
    assert.equal((await login()).status, 0);
    const switched = await svc(["auth", "switch", "--workspace", other.id, "--json"]);
    assert.equal(data<{ default_workspace: string }>(switched).default_workspace, other.id);
    assert.equal(await workspaceActedOn([]), other.id);
    const status = await svc(["auth", "status"]);
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, new RegExp(`^Default workspace: ${other.id}\\.$`, "m"));
    const json = data<{ default_workspace: string }>(await svc(["auth", "status", "--json"]));
    assert.equal(json.default_workspace, other.id);
  });

  it("auth switch refuses a workspace the credentials do not reach, and keeps the default", async () => {
    assert.equal((await login("--workspace", other.id)).status, 0);
    const foreign = await createWorkspace(fixture.server);
    const run = await svc(["auth", "switch", "--workspace", foreign.id]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, new RegExp(`do not reach workspace ${foreign.id}`));
    assert.equal(await workspaceActedOn([]), other.id);
    const refused = await login("--workspace", foreign.id);
    assert.equal(refused.status, 2, "login --workspace checks it too");
  });

  it("the default belongs to the saved credentials: SERVICE_API_KEY does not use it", async () => {
    assert.equal((await login("--workspace", other.id)).status, 0);
    const env = { SERVICE_API_KEY: fixture.owner.key };
    assert.equal(await workspaceActedOn(["--workspace", fixture.owner.id], env), fixture.owner.id);
    const status = data<{ default_workspace: string | null }>(
      await svc(["auth", "status", "--json"], env),
    );
    assert.equal(status.default_workspace, null);
  });

  it("auth switch without saved credentials says to sign in (no_credentials)", async () => {
    const run = await svc(["auth", "switch", "--workspace", other.id]);
    assert.equal(run.status, 4);
    assert.match(run.stderr, /svc auth login.*\(no_credentials\)/);
  });
});
