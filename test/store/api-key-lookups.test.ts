import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import type { Store } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testDatabaseLocation } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

/** The store gathers the API key lookups of concurrent requests into one SELECT. */
describe("API key lookups in the store", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: Store;
  let counter = 0;

  before(async () => {
    dir = await tempDir();
    store = await openStore(await testDatabaseLocation(join(dir.path, "keys")), {
      now: () => new Date(),
    });
    await store.credentials.createWorkspace({ id: "ws_keys", name: "keys" });
  });
  after(async () => {
    await store.close();
    await dir.cleanup();
  });

  /** A new key's token hash, and its id. */
  const newKey = async (): Promise<{ id: string; hash: string }> => {
    counter += 1;
    const hash = hashToken(newApiToken());
    const key = await store.credentials.createApiKey({
      id: `key_lookup_${counter}`,
      workspaceId: "ws_keys",
      tokenHash: hash,
      scopes: ["webhooks:read"],
    });
    return { id: key.id, hash };
  };

  it("answers lookups made at once each with its own key, or null", async () => {
    const first = await newKey();
    const second = await newKey();
    const revoked = await newKey();
    await store.credentials.revokeApiKey(revoked.id);
    const unknown = hashToken(newApiToken());

    const answers = await Promise.all(
      [first.hash, unknown, second.hash, revoked.hash, first.hash].map((hash) =>
        store.credentials.findActiveApiKey(hash),
      ),
    );
    assert.deepEqual(
      answers.map((key) => key?.id ?? null),
      [first.id, null, second.id, null, first.id],
    );
    assert.deepEqual(answers[0]?.scopes, ["webhooks:read"]);
  });

  it("sees a revocation in every lookup made after it", async () => {
    const key = await newKey();
    assert.equal((await store.credentials.findActiveApiKey(key.hash))?.id, key.id);
    await store.credentials.revokeApiKey(key.id);
    const after = await Promise.all(
      [key.hash, key.hash].map((hash) => store.credentials.findActiveApiKey(hash)),
    );
    assert.deepEqual(after, [null, null]);
  });
});
