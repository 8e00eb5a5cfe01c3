import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { verifyPassword } from "../../src/crypto/passwords.ts";
import { hashToken, newApiToken, newId } from "../../src/crypto/tokens.ts";
import { systemClock, type Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { PASSWORD } from "../support/auth.ts";
import { testDatabaseEnv, testDatabaseLocation } from "../support/database.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { tempDir } from "../support/temp.ts";

interface Envelope<T> {
  ok: boolean;
  data: T;
  error: { code: string; message: string };
}

const envelope = <T>(run: CliRun): Envelope<T> => JSON.parse(run.stdout) as Envelope<T>;

function assertStatus(run: CliRun, status: number): void {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

/** The operator commands on users, sessions, workspaces and keys, run in this process. */
describe("svc admin users, sessions, workspaces and keys", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  /** The same database, to make sessions and look at what the commands did. */
  let store: Store;
  let workspaceId: string;
  let users = 0;

  const svc = (args: readonly string[], stdin?: string) =>
    runCliInMemory(args, { env, ...(stdin === undefined ? {} : { stdin }) });

  before(async () => {
    dir = await tempDir();
    const dataDir = join(dir.path, "data");
    env = { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) };
    const init = await svc(["admin", "init", "--output", join(dir.path, "owner.key"), "--json"]);
    assertStatus(init, 0);
    workspaceId = envelope<{ workspace_id: string }>(init).data.workspace_id;
    store = await openStore(await testDatabaseLocation(dataDir), systemClock);
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  /** A new user, member of the first workspace, through `svc admin users create`. */
  const newUser = async (): Promise<{ id: string; email: string }> => {
    const email = `user${(users += 1)}@example.com`;
    const run = await svc(
      [
        "admin",
        "users",
        "create",
        "--email",
        email,
        "--workspace",
        workspaceId,
        "--role",
        "member",
        "--json",
      ],
      `${PASSWORD}\n`,
    );
    assertStatus(run, 0);
    return { id: envelope<{ user_id: string }>(run).data.user_id, email };
  };

  /** A session of the user, as a sign-in makes; returns its token's hash. */
  const newSession = async (userId: string): Promise<string> => {
    const tokenHash = hashToken(newApiToken());
    await store.credentials.createSession({
      id: newId("ses"),
      userId,
      tokenHash,
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    return tokenHash;
  };

  it("workspaces list shows id, name and created_at, as a table and as JSON", async () => {
    const table = await svc(["admin", "workspaces", "list"]);
    assertStatus(table, 0);
    assert.match(table.stdout, /^ID +NAME +CREATED_AT\n/);
    assert.match(table.stdout, new RegExp(`^${workspaceId} +Default +\\d{4}-\\d\\d-\\d\\dT`, "m"));
    const json = envelope<{ id: string; name: string; created_at: string }[]>(
      await svc(["admin", "workspaces", "list", "--json"]),
    );
    assert.deepEqual(Object.keys(json.data[0] ?? {}), ["id", "name", "created_at"]);
    assert.equal(json.data[0]?.id, workspaceId);
  });

  it("keys list shows the keys in use with their last use, never a token or its hash", async () => {
    const other = await svc(["admin", "workspaces", "create", "--name", "Other", "--json"]);
    const otherId = envelope<{ id: string }>(other).data.id;
    const created = await svc([
      "admin",
      "keys",
      "create",
      "--workspace",
      otherId,
      "--scopes",
      "events:write",
      "--output",
      join(dir.path, "other.key"),
      "--json",
    ]);
    assertStatus(created, 0);
    const keyId = envelope<{ id: string }>(created).data.id;
    await store.credentials.recordApiKeyUse(keyId);

    const run = await svc(["admin", "keys", "list", "--workspace", otherId, "--json"]);
    assertStatus(run, 0);
    const [key, ...rest] = envelope<Record<string, unknown>[]>(run).data;
    assert.equal(rest.length, 0);
    assert.ok(key !== undefined);
    assert.deepEqual(Object.keys(key), [
      "id",
      "workspace_id",
      "scopes",
      "created_at",
      "last_used_at",
    ]);
    assert.equal(key.id, keyId);
    assert.deepEqual(key.scopes, ["events:write"]);
    assert.match(String(key.last_used_at), /^\d{4}-\d\d-\d\dT/);

    const all = await svc(["admin", "keys", "list"]);
    assertStatus(all, 0);
    assert.match(all.stdout, /^ID +WORKSPACE_ID +SCOPES +CREATED_AT +LAST_USED_AT\n/);
    assert.ok(all.stdout.includes(keyId) && all.stdout.includes(workspaceId));
    assert.doesNotMatch(all.stdout, /svc_|[0-9a-f]{64}/);

    assertStatus(await svc(["admin", "keys", "revoke", keyId]), 0);
    const after = await svc(["admin", "keys", "list", "--workspace", otherId, "--json"]);
    assert.deepEqual(envelope(after).data, []);
  });

  it("users list shows each user's workspaces and roles, never a password hash", async () => {
    const user = await newUser();
    const json = await svc(["admin", "users", "list", "--json"]);
    assertStatus(json, 0);
    const listed = envelope<{ id: string; email: string; workspaces: unknown }[]>(json).data.find(
      ({ id }) => id === user.id,
    );
    assert.deepEqual(listed?.workspaces, [{ id: workspaceId, name: "Default", role: "member" }]);
    assert.doesNotMatch(json.stdout, /scrypt/);
    const table = await svc(["admin", "users", "list"]);
    assert.match(table.stdout, /^ID +EMAIL +CREATED_AT +WORKSPACES\n/);
    assert.match(
      table.stdout,
      new RegExp(`^${user.id} +${user.email} +\\S+ +${workspaceId}:member$`, "m"),
    );
  });

  it("users delete --yes removes the user, their memberships and sessions", async () => {
    const user = await newUser();
    const session = await newSession(user.id);
    const run = await svc([
      "admin",
      "users",
      "delete",
      user.email.toUpperCase(),
      "--yes",
      "--json",
    ]);
    assertStatus(run, 0);
    assert.deepEqual(envelope(run).data, {
      id: user.id,
      email: user.email,
      deleted: true,
      memberships_removed: 1,
      sessions_revoked: 1,
    });
    assert.equal(await store.credentials.findActiveSession(session), null);
    assert.equal(await store.credentials.findUser(user.id), null);
  });

  it("users delete without a terminal and without --yes refuses and deletes nothing", async () => {
    const user = await newUser();
    const run = await svc(["admin", "users", "delete", user.id]);
    assertStatus(run, 2);
    assert.match(run.stderr, /\(confirmation_required\)\n$/);
    assert.notEqual(await store.credentials.findUser(user.id), null);
  });

  it("an unknown user is not found (exit 5) for every command that names one", async () => {
    for (const args of [
      ["users", "delete", "nobody@example.com", "--yes"],
      ["users", "reset-password", "nobody@example.com"],
      ["sessions", "revoke", "--user", "usr_000000000000000000000000"],
    ]) {
      const run = await svc(["admin", ...args], `${PASSWORD}\n`);
      assertStatus(run, 5);
      assert.match(run.stderr, /^error: No user \S+\. \(not_found\)\n$/);
    }
  });

  it("users reset-password sets the password read from standard input and revokes the sessions", async () => {
    const user = await newUser();
    const sessions = [await newSession(user.id), await newSession(user.id)];
    const newPassword = "a new and longer passphrase";
    const run = await svc(
      ["admin", "users", "reset-password", user.id, "--json"],
      `${newPassword}\n`,
    );
    assertStatus(run, 0);
    assert.deepEqual(envelope(run).data, {
      id: user.id,
      email: user.email,
      password_changed: true,
      sessions_revoked: 2,
    });
    for (const session of sessions) {
      assert.equal(await store.credentials.findActiveSession(session), null);
    }
    const stored = await store.credentials.findUserByEmail(user.email);
    assert.ok(stored !== null && (await verifyPassword(newPassword, stored.passwordHash)));
  });

  it("users reset-password refuses a weak or missing password as users create does, changing nothing", async () => {
    const user = await newUser();
    const session = await newSession(user.id);
    const weak = await svc(["admin", "users", "reset-password", user.email], "short\n");
    assertStatus(weak, 2);
    assert.equal(
      weak.stderr,
      "error: The password must have 12 to 1024 characters; it has 5. (weak_password)\n",
    );
    const none = await svc(["admin", "users", "reset-password", user.email], "");
    assertStatus(none, 2);
    assert.match(none.stderr, /No password given; the password was not changed\. \(cancelled\)/);
    assert.notEqual(await store.credentials.findActiveSession(session), null);
    const stored = await store.credentials.findUserByEmail(user.email);
    assert.ok(stored !== null && (await verifyPassword(PASSWORD, stored.passwordHash)));
  });

  it("sessions revoke --user ends every session of that user and prints how many", async () => {
    const user = await newUser();
    const bystander = await newSession((await newUser()).id);
    await newSession(user.id);
    await newSession(user.id);
    const run = await svc(["admin", "sessions", "revoke", "--user", user.email]);
    assertStatus(run, 0);
    assert.equal(run.stdout, "2\n");
    assert.equal(run.stderr, `Revoked 2 sessions of ${user.email}.\n`);
    const again = await svc(["admin", "sessions", "revoke", "--user", user.id, "--json"]);
    assert.deepEqual(envelope(again).data, { user_id: user.id, email: user.email, revoked: 0 });
    assert.notEqual(await store.credentials.findActiveSession(bystander), null);
  });
});
