import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import { createUser, PASSWORD, signIn } from "../support/auth.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { runSvc } from "../support/svc.ts";
import { startTerminal, type Terminal } from "../support/terminal.ts";

/** What only a terminal brings out in the user commands: the question, the hidden password. */
describe("svc admin users on a terminal", () => {
  let fixture: ServerFixture;
  const terminals: Terminal[] = [];

  before(async () => {
    fixture = await serverFixture();
  });
  after(async () => {
    await Promise.all(terminals.map((terminal) => terminal.close()));
    await fixture.dispose();
  });

  const open = async (args: readonly string[]): Promise<Terminal> => {
    const env = Object.fromEntries(
      Object.entries(fixture.server.env).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    const terminal = await startTerminal(["admin", ...args], env);
    terminals.push(terminal);
    return terminal;
  };

  const userExists = async (email: string): Promise<boolean> => {
    const run = await runSvc(["admin", "users", "list", "--field", "email"], {
      env: fixture.server.env,
    });
    return run.stdout.split("\n").includes(email);
  };

  it("users delete asks first; answering no deletes nothing, yes deletes", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "viewer");
    const no = await open(["users", "delete", user.email]);
    await no.waitFor(new RegExp(`Delete user ${user.email.replaceAll(".", "\\.")} .*\\[y/N\\]`));
    await no.typeLine("n");
    assert.equal(await no.exitStatus(), 2);
    assert.match(await no.screen(), /was not deleted\. \(cancelled\)/);
    assert.ok(await userExists(user.email));

    const yes = await open(["users", "delete", user.email]);
    await yes.waitFor(/\[y\/N\]/);
    await yes.typeLine("y");
    assert.equal(await yes.exitStatus(), 0);
    assert.match(await yes.screen(), /^deleted: usr_\w+$/m);
    assert.ok(!(await userExists(user.email)));
  });

  it("users reset-password asks twice without showing the password", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    const newPassword = "typed on a terminal, twice";
    const terminal = await open(["users", "reset-password", user.email]);
    await terminal.waitFor(/Password for \S+:/);
    await terminal.typeLine(newPassword);
    await terminal.waitFor(/Repeat the password:/);
    await terminal.typeLine(newPassword);
    assert.equal(await terminal.exitStatus(), 0);
    const screen = await terminal.screen();
    assert.ok(!screen.includes(newPassword), screen);
    assert.match(screen, /Password of \S+ changed; 0 sessions revoked\./);
    await signIn(fixture.server, { email: user.email, password: newPassword });
    const old = await apiClient(fixture.server.url, null).post("/v1/auth/sessions", {
      email: user.email,
      password: PASSWORD,
    });
    assert.equal(old.status, 401);
  });
});
