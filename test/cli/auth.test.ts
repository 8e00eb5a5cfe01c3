import assert from "node:assert/strict";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import { createUser, signIn, type TestUser } from "../support/auth.ts";
import { assertExit, envelope } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { createWorkspace, type Workspace } from "../support/server.ts";
import { runSvc, type SvcRun } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

interface StatusJson {
  kind: string;
  user: { email: string } | null;
  credentials_source: string;
  credentials_file: string | null;
  overridden_by_service_api_key: boolean;
  workspaces: { id: string; role: string | null; scopes: string[] }[];
}

describe("svc auth without a terminal; precedence of credentials and workspace", () => {
  let fixture: ServerFixture;
  let other: Workspace;
  let member: TestUser;
  let config: { path: string; cleanup: () => Promise<void> };
  let credentialsFile: string;

  before(async () => {
    fixture = await serverFixture();
    other = await createWorkspace(fixture.server);
    member = await createUser(fixture.server, fixture.owner.id, "member");
  });
  // Each test signs in afresh, in a configuration directory of its own.
  beforeEach(async () => {
    config = await tempDir();
    credentialsFile = join(config.path, "svc", "credentials.json");
  });
  afterEach(() => config.cleanup());
  after(() => fixture.dispose());

  /** `svc` with this test's configuration directory, and no SERVICE_* unless given. */
  const svc = (args: readonly string[], env: NodeJS.ProcessEnv = {}, input?: string) =>
    runSvc(args, {
      env: { XDG_CONFIG_HOME: config.path, ...env },
      ...(input === undefined ? {} : { input }),
    });

  const login = async (user: TestUser): Promise<SvcRun> => {
    const run = await svc(
      ["auth", "login", "--email", user.email, "--password-stdin", "--json"],
      { SERVICE_API_URL: fixture.server.url },
      `${user.password}\n`,
    );
    assertExit(run, 0);
    return run;
  };

  it("the credentials file is mode 0600 in a 0700 directory, and holds no password", async () => {
    await login(member);
    assert.equal((await stat(credentialsFile)).mode & 0o777, 0o600);
    assert.equal((await stat(join(config.path, "svc"))).mode & 0o777, 0o700);
    const text = await readFile(credentialsFile, "utf8");
    assert.ok(!text.includes(member.password), "the password is never saved");
    const saved = JSON.parse(text) as { api_url: string; kind: string; token: string };
    assert.equal(saved.kind, "session");
    assert.match(saved.token, /^svs_/);
    assert.equal(new URL(saved.api_url).origin, new URL(fixture.server.url).origin);
  });

  it("without a terminal, login refuses to ask (terminal_required, exit 2)", async () => {
    const run = await svc(["auth", "login"], { SERVICE_API_URL: fixture.server.url });
    assertExit(run, 2);
    assert.match(run.stderr, /terminal_required/);
    await assert.rejects(stat(credentialsFile), { code: "ENOENT" });
  });

  it("a wrong password saves nothing and says only that the e-mail or password is wrong", async () => {
    const run = await svc(
      ["auth", "login", "--email", member.email, "--password-stdin"],
      { SERVICE_API_URL: fixture.server.url },
      "wrong password entirely\n",
    );
    assertExit(run, 4);
    assert.match(run.stderr, /e-mail address or the password is wrong/);
    await assert.rejects(stat(credentialsFile), { code: "ENOENT" });
  });

  it("saved credentials carry the API URL and the only workspace: no other setting is needed", async () => {
    await login(member);
    const run = await svc(["webhooks", "list", "--json"]);
    assertExit(run, 0);
    assert.deepEqual(envelope(run).data, []);
  });

  it("SERVICE_API_KEY wins over saved credentials; status says so", async () => {
    await login(member);
    // The other workspace's key, with no workspace named: its own workspace, asked of the API.
    const env = { SERVICE_API_URL: fixture.server.url, SERVICE_API_KEY: other.key };
    const created = await svc(
      [
        "webhooks",
        "create",
        "--url",
        "https://public.example.test/k",
        "--output",
        join(config.path, "whsec.txt"),
        "--json",
      ],
      env,
    );
    assertExit(created, 0);
    const inOther = await apiClient(fixture.server.url, other.key).get<{ data: unknown[] }>(
      `/v1/workspaces/${other.id}/webhooks`,
    );
    assert.equal(inOther.body.data.length, 1, "created in the key's workspace");

    const status = await svc(["auth", "status", "--json"], env);
    assertExit(status, 0);
    const data = envelope<StatusJson>(status).data;
    assert.equal(data.kind, "api_key");
    assert.equal(data.credentials_source, "SERVICE_API_KEY");
    assert.equal(data.overridden_by_service_api_key, true);
    const human = await svc(["auth", "status"], env);
    assert.match(human.stdout, /SERVICE_API_KEY is set, and it takes precedence/);
  });

  it("status names the user, the API, the workspaces with role and scopes, and the file", async () => {
    await login(member);
    const run = await svc(["auth", "status", "--json"]);
    assertExit(run, 0);
    const data = envelope<StatusJson>(run).data;
    assert.equal(data.kind, "session");
    assert.equal(data.user?.email, member.email);
    assert.equal(data.credentials_file, credentialsFile);
    assert.equal(data.overridden_by_service_api_key, false);
    assert.deepEqual(data.workspaces, [
      {
        id: fixture.owner.id,
        name: "Default",
        role: "member",
        scopes: ["webhooks:read", "webhooks:write", "events:read", "events:write"],
      },
    ]);
  });

  it("a member of workspace A gets 403 for workspace B through --workspace and SERVICE_WORKSPACE_ID", async () => {
    await login(member);
    const byFlag = await svc(["webhooks", "list", "--workspace", other.id]);
    assertExit(byFlag, 4);
    assert.match(byFlag.stderr, /workspace_forbidden/);
    const byEnv = await svc(["webhooks", "list"], { SERVICE_WORKSPACE_ID: other.id });
    assertExit(byEnv, 4);
    assert.match(byEnv.stderr, /workspace_forbidden/);
    // --workspace wins over SERVICE_WORKSPACE_ID.
    const flagWins = await svc(["webhooks", "list", "--workspace", fixture.owner.id], {
      SERVICE_WORKSPACE_ID: other.id,
    });
    assertExit(flagWins, 0);
  });

  it("a viewer can list and get through svc, but not create", async () => {
    const viewer = await createUser(fixture.server, fixture.owner.id, "viewer");
    await login(viewer);
    assertExit(await svc(["webhooks", "list"]), 0);
    const created = await svc([
      "webhooks",
      "create",
      "--url",
      "https://public.example.test/v",
      "--output",
      join(config.path, "never.txt"),
    ]);
    assertExit(created, 4);
    assert.match(created.stderr, /insufficient_scope/);
  });

  it("with several workspaces and none named, svc asks for one (no_workspace)", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    await createUser(fixture.server, other.id, "viewer", user.email);
    await login(user);
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 2);
    assert.match(run.stderr, /reach 2 .*--workspace/);
  });

  it("a revoked session is refused with a hint to sign in again", async () => {
    await login(member);
    const saved = JSON.parse(await readFile(credentialsFile, "utf8")) as { token: string };
    await apiClient(fixture.server.url, saved.token).delete("/v1/auth/session");
    const run = await svc(["webhooks", "list"]);
    assertExit(run, 4);
    assert.match(run.stderr, /svc auth login/);
  });

  it("--with-token saves an API key after checking it; logout removes it and leaves the key valid", async () => {
    const saved = await svc(
      ["auth", "login", "--with-token"],
      { SERVICE_API_URL: fixture.server.url },
      `${other.key}\n`,
    );
    assertExit(saved, 0);
    const list = await svc(["webhooks", "list", "--json"]);
    assertExit(list, 0);
    const logout = await svc(["auth", "logout"]);
    assertExit(logout, 0);
    assert.match(logout.stderr, /stays valid/);
    await assert.rejects(stat(credentialsFile), { code: "ENOENT" });
    const still = await apiClient(fixture.server.url, other.key).get(
      `/v1/workspaces/${other.id}/webhooks`,
    );
    assert.equal(still.status, 200);
  });

  it("--with-token refuses a key the API does not accept, and saves nothing", async () => {
    const run = await svc(
      ["auth", "login", "--with-token"],
      { SERVICE_API_URL: fixture.server.url },
      "svc_not-a-real-key\n",
    );
    assertExit(run, 4);
    await assert.rejects(stat(credentialsFile), { code: "ENOENT" });
  });

  it("logout revokes the session on the server", async () => {
    await login(member);
    const saved = JSON.parse(await readFile(credentialsFile, "utf8")) as { token: string };
    assertExit(await svc(["auth", "logout"]), 0);
    const response = await apiClient(fixture.server.url, saved.token).get("/v1/auth/session");
    assert.equal(response.status, 401);
  });

  it("signing in again revokes the session it replaces", async () => {
    await login(member);
    const first = JSON.parse(await readFile(credentialsFile, "utf8")) as { token: string };
    await login(member);
    const response = await apiClient(fixture.server.url, first.token).get("/v1/auth/session");
    assert.equal(response.status, 401);
  });

  it("the session works with a token from the API directly, as Bearer", async () => {
    const { token } = await signIn(fixture.server, member);
    const run = await svc(["webhooks", "list"], {
      SERVICE_API_URL: fixture.server.url,
      SERVICE_API_KEY: token,
    });
    assertExit(run, 0);
  });
});

describe("svc admin users create", () => {
  let fixture: ServerFixture;
  before(async () => {
    fixture = await serverFixture();
  });
  after(() => fixture.dispose());

  const create = (email: string, role: string, input: string) =>
    runSvc(
      [
        "admin",
        "users",
        "create",
        "--email",
        email,
        "--workspace",
        fixture.owner.id,
        "--role",
        role,
        "--json",
      ],
      { env: fixture.server.env, input },
    );

  it("refuses a password shorter than 12 characters and creates nothing", async () => {
    const run = await create("short@example.com", "member", "elevenchars\n");
    assertExit(run, 2);
    assert.equal(envelope(run).error.code, "weak_password");
    const signIn = await apiClient(fixture.server.url, null).post("/v1/auth/sessions", {
      email: "short@example.com",
      password: "elevenchars",
    });
    assert.equal(signIn.status, 401);
  });

  it("for an existing user, adds or changes the membership and says so; the password stays", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "viewer");
    const run = await create(user.email, "owner", "");
    assertExit(run, 0);
    const data = envelope<{ created: boolean; previous_role: string; scopes: string[] }>(run).data;
    assert.equal(data.created, false);
    assert.equal(data.previous_role, "viewer");
    assert.equal(data.scopes.length, 4);
    assert.match(run.stderr, /role in .* changed from viewer to owner/);
    await signIn(fixture.server, user);
  });

  it("refuses an unknown role as a usage error", async () => {
    const run = await create("x@example.com", "admin", "a long enough password\n");
    assertExit(run, 2);
  });
});
