import assert from "node:assert/strict";
import { copyFile, chmod, mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import { createUser, PASSWORD, signIn } from "../support/auth.ts";
import { assertExit, envelope } from "../support/cli.ts";
import { testBackend } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { serverFixture, type ServerFixture } from "../support/fixture.ts";
import { publishMany } from "../support/publish.ts";
import { startTestServer } from "../support/server.ts";
import { runSvc, type SvcRun } from "../support/svc.ts";

/** The operator commands through the built binary, beside a running server. */
describe("svc admin beside a running server", () => {
  let fixture: ServerFixture;
  const admin = (args: readonly string[], input?: string): Promise<SvcRun> =>
    runSvc(["admin", ...args], {
      env: fixture.server.env,
      ...(input === undefined ? {} : { input }),
    });

  before(async () => {
    fixture = await serverFixture();
  });
  after(() => fixture.dispose());

  it("workspaces list and keys list show what exists; keys list shows a key's use, never the key", async () => {
    const workspaces = await admin(["workspaces", "list", "--json"]);
    assertExit(workspaces, 0);
    assert.deepEqual(
      envelope<{ id: string }[]>(workspaces).data.map(({ id }) => id),
      [fixture.owner.id],
    );
    const response = await apiClient(fixture.server.url, fixture.owner.key).get(
      `/v1/workspaces/${fixture.owner.id}/webhooks`,
    );
    assert.equal(response.status, 200);
    // The use is written after the answer, off the request's path.
    const lastUsed = await eventually(
      async () => {
        const run = await admin(["keys", "list", "--workspace", fixture.owner.id, "--json"]);
        assertExit(run, 0);
        assert.ok(!run.stdout.includes(fixture.owner.key), "the key is never shown");
        const [key] = envelope<{ last_used_at: string | null }[]>(run).data;
        return key?.last_used_at ?? undefined;
      },
      { what: "the key's last use" },
    );
    assert.ok(Math.abs(Date.parse(lastUsed) - Date.now()) < 60_000, lastUsed);
  });

  it("reset-password, sessions revoke and users delete each end the user's sessions", async () => {
    const user = await createUser(fixture.server, fixture.owner.id, "member");
    const api = (token: string) => apiClient(fixture.server.url, token);
    const first = await signIn(fixture.server, user);
    assert.equal((await api(first.token).get("/v1/auth/session")).status, 200);

    const newPassword = `${PASSWORD} again`;
    const reset = await admin(["users", "reset-password", user.email], `${newPassword}\n`);
    assertExit(reset, 0);
    assert.match(reset.stderr, /1 session revoked/);
    assert.equal((await api(first.token).get("/v1/auth/session")).status, 401);
    const signedIn = await apiClient(fixture.server.url, null).post("/v1/auth/sessions", {
      email: user.email,
      password: PASSWORD,
    });
    assert.equal(signedIn.status, 401, "the old password no longer works");

    const second = await signIn(fixture.server, { email: user.email, password: newPassword });
    const revoked = await admin(["sessions", "revoke", "--user", user.email]);
    assertExit(revoked, 0);
    assert.equal(revoked.stdout, "1\n");
    assert.equal((await api(second.token).get("/v1/auth/session")).status, 401);

    const third = await signIn(fixture.server, { email: user.email, password: newPassword });
    const deleted = await admin(["users", "delete", user.email, "--yes", "--json"]);
    assertExit(deleted, 0);
    assert.equal(envelope<{ sessions_revoked: number }>(deleted).data.sessions_revoked, 1);
    assert.equal((await api(third.token).get("/v1/auth/session")).status, 401);
    const listed = await admin(["users", "list", "--json"]);
    assert.deepEqual(envelope(listed).data, []);
  });

  it(
    "backs up while the server takes publishes; the backup, restored with the key, serves its events",
    { skip: testBackend !== "sqlite" ? "SQLite only" : false },
    async () => {
      const output = join(fixture.dir, "live.db");
      const publish = (count: number) =>
        publishMany({
          baseUrl: fixture.server.url,
          key: fixture.owner.key,
          workspaceId: fixture.owner.id,
          count,
          parallel: 8,
        });
      // 50 events before the copy, and more while it is taken.
      await publish(50);
      const publishing = publish(300);
      const backup = await admin(["backup", "--output", output, "--json"]);
      await publishing;
      assertExit(backup, 0);
      assert.equal((await stat(output)).mode & 0o777, 0o600);

      const refused = await admin(["restore", "--input", output, "--yes"]);
      assertExit(refused, 1);
      assert.match(refused.stderr, /\(database_in_use\)\n$/);

      const fresh = join(fixture.dir, "restored");
      await mkdir(fresh, { mode: 0o700 });
      await copyFile(join(fixture.server.dataDir, "encryption.key"), join(fresh, "encryption.key"));
      await chmod(join(fresh, "encryption.key"), 0o600);
      const restore = await runSvc(["admin", "restore", "--input", output, "--yes"], {
        env: { SVC_DATA_DIR: fresh },
      });
      assertExit(restore, 0);
      const server = await startTestServer({ dataDir: fresh });
      try {
        const events = await apiClient(server.url, fixture.owner.key).get<{ data: unknown[] }>(
          `/v1/workspaces/${fixture.owner.id}/events?limit=50`,
        );
        assert.equal(events.status, 200, events.text);
        assert.equal(events.body.data.length, 50);
      } finally {
        await server.stop();
      }
    },
  );

  it(
    "on PostgreSQL, backup points at pg_dump and exits 1",
    { skip: testBackend !== "postgres" ? "PostgreSQL only" : false },
    async () => {
      const run = await admin(["backup", "--output", join(fixture.dir, "pg.db")]);
      assertExit(run, 1);
      assert.match(run.stderr, /^error: .*pg_dump.*\(sqlite_only\)\n$/);
    },
  );
});
