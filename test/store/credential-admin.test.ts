import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hashToken, newApiToken, newId } from "../../src/crypto/tokens.ts";
import type { Store } from "../../src/interfaces.ts";
import { apiKeyUseResolutionMs } from "../../src/store/credential-store.ts";
import { openStore } from "../../src/store/open-store.ts";
import { manualClock } from "../support/clock.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/** What the operator commands read and change in the credentials slice. */
describe("the credentials slice for operators", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let location: string;
  const clock = manualClock(Date.UTC(2026, 10, 25, 9, 0, 0));
  let store: Store;

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "data"));
    store = await openStore(location, clock);
    await store.credentials.createWorkspace({ id: "ws_first", name: "First" });
    clock.advance(1);
    await store.credentials.createWorkspace({ id: "ws_second", name: "Second" });
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  const newKey = async (workspaceId: string): Promise<string> => {
    const key = await store.credentials.createApiKey({
      id: newId("key"),
      workspaceId,
      tokenHash: hashToken(newApiToken()),
      scopes: ["events:write"],
    });
    return key.id;
  };

  const lastUsed = async (keyId: string): Promise<number | null> => {
    const key = (await store.credentials.listApiKeys(null)).find(({ id }) => id === keyId);
    assert.ok(key !== undefined, `no key ${keyId}`);
    return key.lastUsedAt?.getTime() ?? null;
  };

  const newUser = async (email: string): Promise<string> => {
    const user = await store.credentials.createUser(
      { id: newId("usr"), email, passwordHash: "scrypt$old" },
      { workspaceId: "ws_first", role: "member" },
    );
    return user.id;
  };

  const newSession = async (userId: string): Promise<string> => {
    const tokenHash = hashToken(newApiToken());
    await store.credentials.createSession({
      id: newId("ses"),
      userId,
      tokenHash,
      expiresAt: new Date(clock.now().getTime() + 3_600_000),
    });
    return tokenHash;
  };

  it("lists the workspaces oldest first", async () => {
    const workspaces = await store.credentials.listWorkspaces();
    assert.deepEqual(
      workspaces.map(({ id, name }) => [id, name]),
      [
        ["ws_first", "First"],
        ["ws_second", "Second"],
      ],
    );
  });

  it("lists the unrevoked keys, of one workspace or of all", async () => {
    const first = await newKey("ws_first");
    const second = await newKey("ws_second");
    const revoked = await newKey("ws_first");
    await store.credentials.revokeApiKey(revoked);
    const all = (await store.credentials.listApiKeys(null)).map(({ id }) => id);
    assert.ok(all.includes(first) && all.includes(second) && !all.includes(revoked));
    const ofFirst = await store.credentials.listApiKeys("ws_first");
    assert.ok(ofFirst.every(({ workspaceId }) => workspaceId === "ws_first"));
    assert.ok(ofFirst.some(({ id }) => id === first));
  });

  it("writes a key's last use at most once a minute", async () => {
    const key = await newKey("ws_first");
    assert.equal(await lastUsed(key), null);
    const firstUse = clock.now().getTime();
    await store.credentials.recordApiKeyUse(key);
    assert.equal(await lastUsed(key), firstUse);
    clock.advance(apiKeyUseResolutionMs - 1);
    await store.credentials.recordApiKeyUse(key);
    assert.equal(await lastUsed(key), firstUse);
    clock.advance(1);
    await store.credentials.recordApiKeyUse(key);
    assert.equal(await lastUsed(key), clock.now().getTime());
  });

  it("another process sharing the database does not write a use newer than a minute", async () => {
    const key = await newKey("ws_first");
    await store.credentials.recordApiKeyUse(key);
    const written = clock.now().getTime();
    const other = await openStore(location, clock);
    try {
      clock.advance(1_000);
      await other.credentials.recordApiKeyUse(key);
      assert.equal(await lastUsed(key), written);
    } finally {
      await other.close();
    }
  });

  it("finds a user by id or by e-mail address in any case", async () => {
    const id = await newUser("Find.Me@example.com");
    assert.equal((await store.credentials.findUser(id))?.email, "find.me@example.com");
    assert.equal((await store.credentials.findUser("FIND.me@example.com"))?.id, id);
    assert.equal(await store.credentials.findUser("nobody@example.com"), null);
  });

  it("lists users with their memberships", async () => {
    const id = await newUser("listed@example.com");
    await store.credentials.putMembership(id, "ws_second", "viewer");
    const listed = (await store.credentials.listUsers()).find((user) => user.id === id);
    assert.deepEqual(listed?.memberships, [
      { workspaceId: "ws_first", workspaceName: "First", role: "member" },
      { workspaceId: "ws_second", workspaceName: "Second", role: "viewer" },
    ]);
  });

  it("deletes a user with their memberships and sessions, which stop working", async () => {
    const id = await newUser("leaving@example.com");
    await store.credentials.putMembership(id, "ws_second", "owner");
    const session = await newSession(id);
    assert.deepEqual(await store.credentials.deleteUser(id), { sessions: 1, memberships: 2 });
    assert.equal(await store.credentials.findActiveSession(session), null);
    assert.equal(await store.credentials.findUser(id), null);
    assert.deepEqual(await store.credentials.listMemberships(id), []);
    assert.equal(await store.credentials.deleteUser(id), null);
  });

  it("a new password revokes the user's sessions", async () => {
    const id = await newUser("reset@example.com");
    const sessions = [await newSession(id), await newSession(id)];
    assert.equal(await store.credentials.setPassword(id, "scrypt$new"), 2);
    for (const session of sessions) {
      assert.equal(await store.credentials.findActiveSession(session), null);
    }
    const user = await store.credentials.findUserByEmail("reset@example.com");
    assert.equal(user?.passwordHash, "scrypt$new");
    assert.equal(await store.credentials.setPassword("usr_missing", "scrypt$x"), null);
  });

  it("revokes every session of a user still in use, and counts them", async () => {
    const id = await newUser("sessions@example.com");
    const kept = await newSession(await newUser("bystander@example.com"));
    await newSession(id);
    await newSession(id);
    assert.equal(await store.credentials.revokeUserSessions(id), 2);
    assert.equal(await store.credentials.revokeUserSessions(id), 0);
    assert.notEqual(await store.credentials.findActiveSession(kept), null);
  });
});
