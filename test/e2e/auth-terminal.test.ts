import assert from "node:assert/strict";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createUser, type TestUser } from "../support/auth.ts";
import { registerDirectly } from "../support/cli.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { startTerminal, type Terminal } from "../support/terminal.ts";
import { tempDir } from "../support/temp.ts";

/** SPEC 5.1: a person signs in on a terminal, works with the saved session, signs out. */
describe("svc auth on a terminal", () => {
  let fixture: ServerFixture;
  let config: { path: string; cleanup: () => Promise<void> };
  let user: TestUser;
  const terminals: Terminal[] = [];

  before(async () => {
    fixture = await serverFixture();
    config = await tempDir();
    user = await createUser(fixture.server, fixture.owner.id, "member");
  });
  after(async () => {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    await config.cleanup();
    await fixture.dispose();
  });

  /** Only the configuration directory: no SERVICE_API_URL, SERVICE_API_KEY or workspace. */
  const open = async (args: readonly string[]): Promise<Terminal> => {
    const terminal = await startTerminal(args, { XDG_CONFIG_HOME: config.path });
    terminals.push(terminal);
    return terminal;
  };

  it("login with typed answers, status, list with the saved session, logout, then list fails", async () => {
    const destination = await registerDirectly(fixture, { url: "https://public.example.test/t" });

    const login = await open(["auth", "login"]);
    await login.waitFor(/API URL \[http:\/\/127\.0\.0\.1:8787\]:/);
    await login.typeLine(fixture.server.url);
    await login.waitFor(/^E-mail:/m);
    await login.typeLine(user.email);
    await login.waitFor(/^Password:/m);
    await login.typeLine(user.password);
    assert.equal(await login.exitStatus(), 0, await login.screen());
    const loginScreen = await login.screen();
    assert.ok(!loginScreen.includes(user.password), "the password is not echoed");
    assert.match(loginScreen, new RegExp(`Signed in to .* as ${user.email.replace(".", "\\.")}`));
    const file = join(config.path, "svc", "credentials.json");
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const status = await open(["auth", "status"]);
    assert.equal(await status.exitStatus(), 0, await status.screen());
    const statusScreen = await status.screen();
    assert.match(statusScreen, new RegExp(`as ${user.email.replace(".", "\\.")}`));
    assert.ok(statusScreen.includes(`Credentials: ${file}`), statusScreen);
    assert.match(statusScreen, new RegExp(`${fixture.owner.id} \\(Default\\): member`));

    const list = await open(["webhooks", "list", "--no-pager"]);
    assert.equal(await list.exitStatus(), 0, await list.screen());
    assert.ok((await list.screen()).includes(destination.id));

    const logout = await open(["auth", "logout"]);
    assert.equal(await logout.exitStatus(), 0, await logout.screen());
    assert.match(await logout.screen(), /Signed out/);
    await assert.rejects(stat(file), { code: "ENOENT" });

    const refused = await open(["webhooks", "list", "--no-pager"]);
    assert.equal(await refused.exitStatus(), 4);
    const refusedScreen = await refused.screen();
    assert.match(refusedScreen, /no_credentials/);
    assert.match(refusedScreen, /sign in with `svc auth login`/);
  });

  it("Ctrl-D at a question cancels the sign-in and saves nothing", async () => {
    const login = await open(["auth", "login"]);
    await login.waitFor(/API URL \[/);
    await login.typeLine("");
    await login.waitFor(/^E-mail:/m);
    await login.sendKey("C-d");
    assert.equal(await login.exitStatus(), 2);
    assert.match(await login.screen(), /cancelled/);
    await assert.rejects(stat(join(config.path, "svc", "credentials.json")), {
      code: "ENOENT",
    });
  });
});
