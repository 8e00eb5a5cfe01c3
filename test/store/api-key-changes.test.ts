import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import pg from "pg";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import type { Store } from "../../src/interfaces.ts";
import { apiKeyCacheTtlMs } from "../../src/store/api-key-cache.ts";
import { openStore } from "../../src/store/open-store.ts";
import {
  apiKeysChannel,
  PostgresChannelListener,
} from "../../src/store/postgres/channel-listener.ts";
import { connectionConfig } from "../../src/store/postgres/connection-config.ts";
import { manualClock } from "../support/clock.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { memoryLogger } from "../support/memory-log.ts";
import { startTcpSwitch, type TcpSwitch } from "../support/tcp-switch.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A request's API key from memory on PostgreSQL (decision 63), with the real listener and the
 * trigger of migration 000022: whoever changes a key, the store stops answering with it.
 */
describe(
  "API keys kept while their changes are heard",
  { skip: testBackend !== "postgres" && "PostgreSQL only: SQLite keeps no keys" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let store: Store;
    let listener: PostgresChannelListener;
    /** Another session on the database: an operator's psql, another process. */
    let other: pg.Client;
    const clock = manualClock(Date.parse("2026-11-26T12:00:00Z"));
    let counter = 0;

    before(async () => {
      dir = await tempDir();
      const url = await testDatabaseLocation(join(dir.path, "keys"));
      store = await openStore(url, clock);
      listener = new PostgresChannelListener(
        url,
        apiKeysChannel,
        "changes to API keys",
        memoryLogger().logger,
      );
      store.credentials.cacheApiKeys(listener);
      other = new pg.Client(connectionConfig(url));
      await other.connect();
      await store.credentials.createWorkspace({ id: "ws_kept", name: "kept" });
      await eventually(() => Promise.resolve(listener.listening || undefined), {
        what: "the listener",
      });
    });
    after(async () => {
      await other.end();
      await listener.stop();
      await store.close();
      await dir.cleanup();
    });

    const newKey = async (workspaceId = "ws_kept"): Promise<{ id: string; hash: string }> => {
      counter += 1;
      const hash = hashToken(newApiToken());
      const key = await store.credentials.createApiKey({
        id: `key_kept_${counter}`,
        workspaceId,
        tokenHash: hash,
        scopes: ["webhooks:read"],
      });
      return { id: key.id, hash };
    };
    const found = async (hash: string): Promise<string | null> =>
      (await store.credentials.findActiveApiKey(hash))?.id ?? null;

    /** Revokes without the trigger, as if its notice were lost: only the TTL bounds it. */
    const revokeUnheard = async (id: string): Promise<void> => {
      await other.query("BEGIN");
      await other.query("SET LOCAL session_replication_role = replica");
      await other.query("UPDATE api_keys SET revoked_at = 1 WHERE id = $1", [id]);
      await other.query("COMMIT");
    };

    it("answers from memory: a change that goes unheard counts after the TTL", async () => {
      const key = await newKey();
      assert.equal(await found(key.hash), key.id);
      await revokeUnheard(key.id);
      assert.equal(await found(key.hash), key.id, "kept: no statement read the revocation");
      clock.advance(apiKeyCacheTtlMs);
      assert.equal(await found(key.hash), null);
    });

    it("hears a revocation by another session, and a deletion", async () => {
      const revoked = await newKey();
      const deleted = await newKey();
      assert.equal(await found(revoked.hash), revoked.id);
      assert.equal(await found(deleted.hash), deleted.id);
      await other.query("UPDATE api_keys SET revoked_at = 1 WHERE id = $1", [revoked.id]);
      await eventually(async () => ((await found(revoked.hash)) === null ? true : undefined), {
        what: "the revocation's notice",
      });
      await other.query("DELETE FROM api_keys WHERE id = $1", [deleted.id]);
      await eventually(async () => ((await found(deleted.hash)) === null ? true : undefined), {
        what: "the deletion's notice",
      });
    });

    it("refuses a key at once after this process revoked it, or deleted its workspace", async (t) => {
      const byCli = await newKey();
      const byApi = await newKey();
      await store.credentials.createWorkspace({ id: "ws_gone", name: "gone" });
      const inGone = await newKey("ws_gone");
      // Without the notices, which would race the next lookup: this process forgets by itself.
      await other.query("ALTER TABLE api_keys DISABLE TRIGGER USER");
      t.after(() => other.query("ALTER TABLE api_keys ENABLE TRIGGER USER"));
      const changes: [{ id: string; hash: string }, () => Promise<unknown>][] = [
        [byCli, () => store.credentials.revokeApiKey(byCli.id)],
        [byApi, () => store.workspaces.revokeApiKey("ws_kept", byApi.id)],
        [inGone, () => store.workspaces.deleteWorkspace("ws_gone", { cascade: true })],
      ];
      for (const [key, change] of changes) {
        assert.equal(await found(key.hash), key.id);
        await revokeUnheard("key_other");
        assert.equal(await found(key.hash), key.id, "kept");
        assert.notEqual(await change(), false);
        assert.equal(await found(key.hash), null, `${key.id} refused at once`);
      }
    });

    it("notifies for the changes that matter, not for the note of a key's use nor for nothing", async (t) => {
      const key = await newKey();
      const heard: string[] = [];
      const ear = new pg.Client(
        connectionConfig(await testDatabaseLocation(join(dir.path, "keys"))),
      );
      await ear.connect();
      /** Runs `change`, then a marker: notices come in commit order, so the marker comes last. */
      const noticesOf = async (change: () => Promise<unknown>): Promise<string[]> => {
        heard.length = 0;
        await change();
        await other.query(`NOTIFY ${apiKeysChannel}, 'marker'`);
        await eventually(() => Promise.resolve(heard.includes("marker") || undefined), {
          what: "the marker",
        });
        return heard.slice(0, -1);
      };
      try {
        ear.on("notification", (notice) => heard.push(notice.payload ?? ""));
        await ear.query(`LISTEN ${apiKeysChannel}`);
        assert.deepEqual(
          await noticesOf(async () => {
            await store.credentials.recordApiKeyUse(key.id);
            await other.query("UPDATE api_keys SET last_used_at = 5 WHERE id = $1", [key.id]);
          }),
          [],
          "use notes notify nobody",
        );
        assert.deepEqual(
          await noticesOf(() =>
            other.query("UPDATE api_keys SET revoked_at = NULL WHERE id = 'key_none'"),
          ),
          [],
          "nor does an UPDATE of no row",
        );
        assert.deepEqual(
          await noticesOf(() =>
            other.query("UPDATE api_keys SET scopes = scopes WHERE id = $1", [key.id]),
          ),
          [],
          "nor one that changes nothing",
        );
        assert.deepEqual(
          await noticesOf(() =>
            other.query("UPDATE api_keys SET scopes = $2 WHERE id = $1", [
              key.id,
              '["webhooks:write"]',
            ]),
          ),
          [""],
          "a change of scope notifies",
        );
        // A column a later release adds counts without a new trigger.
        await other.query("ALTER TABLE api_keys ADD COLUMN later_column TEXT");
        t.after(() => other.query("ALTER TABLE api_keys DROP COLUMN later_column"));
        assert.deepEqual(
          await noticesOf(() =>
            other.query("UPDATE api_keys SET later_column = 'x' WHERE id = $1", [key.id]),
          ),
          [""],
        );
      } finally {
        await ear.end();
      }
    });

    /**
     * A listener on the keys' channel through a TCP switch (which can freeze its connection),
     * once it listens; `hearing` records what it told, in order. Both end with the test.
     */
    const listenerThroughSwitch = async (
      t: TestContext,
      checkMs: number,
    ): Promise<{
      listener: PostgresChannelListener;
      tcpSwitch: TcpSwitch;
      hearing: boolean[];
      log: ReturnType<typeof memoryLogger>;
    }> => {
      const url = new URL(await testDatabaseLocation(join(dir.path, "keys")));
      const tcpSwitch = await startTcpSwitch(url.hostname, Number(url.port || 5432));
      t.after(() => tcpSwitch.close());
      url.hostname = "127.0.0.1";
      url.port = String(tcpSwitch.port);
      const log = memoryLogger();
      const through = new PostgresChannelListener(
        url.toString(),
        apiKeysChannel,
        "keys",
        log.logger,
        {
          checkMs,
        },
      );
      const hearing: boolean[] = [];
      through.start({ changed: () => undefined, hearing: (on) => hearing.push(on) });
      t.after(() => through.stop());
      await eventually(() => Promise.resolve(hearing.length === 1 || undefined), {
        what: "listening",
      });
      return { listener: through, tcpSwitch, hearing, log };
    };

    it("finds a connection that stopped answering without closing, and listens again", async (t) => {
      const { tcpSwitch, hearing, log } = await listenerThroughSwitch(t, 200);
      tcpSwitch.freeze();
      await eventually(() => Promise.resolve(hearing.length === 3 || undefined), {
        what: "the frozen connection found, and a new one listening",
      });
      assert.deepEqual(hearing, [true, false, true]);
      await eventually(
        () => Promise.resolve(/no answer to a check in 200 ms/.test(log.text()) || undefined),
        { what: "the warning" },
      );
    });

    it("stops at once even when its connection stopped answering", async (t) => {
      const { listener: stuck, tcpSwitch, hearing } = await listenerThroughSwitch(t, 60_000);
      tcpSwitch.freeze();
      const started = Date.now();
      await stuck.stop();
      const took = Date.now() - started;
      assert.ok(took < 3000, `stop took ${took} ms`);
      assert.deepEqual(hearing, [true, false]);
    });

    it("keeps nothing while its connection is lost, and keeps again once it listens", async () => {
      const key = await newKey();
      assert.equal(await found(key.hash), key.id);
      // Every listener of the database's keys: this store's (and any a test before left).
      await other.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = $1 AND datname = current_database()`,
        [`svc listen ${apiKeysChannel}`],
      );
      await eventually(() => Promise.resolve(listener.listening ? undefined : true), {
        what: "the listener's loss",
      });
      await revokeUnheard(key.id);
      // Whether the listener is back yet or not, what was kept before the loss is forgotten.
      assert.equal(await found(key.hash), null);

      await eventually(() => Promise.resolve(listener.listening || undefined), {
        what: "the listener again",
      });
      const later = await newKey();
      assert.equal(await found(later.hash), later.id);
      await revokeUnheard(later.id);
      assert.equal(await found(later.hash), later.id, "kept again");
    });
  },
);
