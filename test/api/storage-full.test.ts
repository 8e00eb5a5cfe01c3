import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApi } from "../../src/api/app.ts";
import { listenSettingsOf } from "../../src/api/listen/settings.ts";
import { portalSettingsOf } from "../../src/api/portal/settings.ts";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { hashToken, newApiToken } from "../../src/crypto/tokens.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { AddressPolicy } from "../../src/net/address-policy.ts";
import { PortSet } from "../../src/net/port-set.ts";
import type { Database } from "../../src/store/database.ts";
import { migrate } from "../../src/store/migrate.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { SqlStore } from "../../src/store/sql-store.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { mountSmallDisk, postgresDiskFull, type SmallDisk } from "../support/full-disk.ts";
import { metricsOf } from "../support/metrics.ts";
import { tempDir } from "../support/temp.ts";

/** The API over a store on `location`, through `inject()`, with a workspace and a key. */
async function apiOn(location: string) {
  const db = openDatabase(location);
  await migrate(db);
  const clock = { now: () => new Date() };
  const store = new SqlStore(db, clock);
  const token = newApiToken();
  const workspaceId = "ws_storage";
  await store.credentials.initialise(
    { id: workspaceId, name: "storage" },
    {
      id: "key_storage",
      workspaceId,
      tokenHash: hashToken(token),
      scopes: ["webhooks:write", "events:write"],
    },
  );
  await store.destinations.createDestination({
    id: "dst_storage",
    workspaceId,
    url: "https://hooks.test/storage",
    events: ["*"],
    secretCiphertext: "sealed",
  });
  const app: FastifyInstance = buildApi(
    {
      store,
      secretBox: new SecretBox(Buffer.alloc(32, 7)),
      clock,
      resolver: { resolve: () => Promise.resolve(["93.184.215.14"]) },
      addressPolicy: new AddressPolicy(),
      destinationPorts: new PortSet(["443"]),
      sessionTtlMs: 3_600_000,
      behindTls: false,
      limits: loadServerConfig({ env: {}, flags: {} }),
      eventRetentionMs: 86_400_000,
      metrics: metricsOf(store, clock),
      listen: listenSettingsOf(loadServerConfig({ env: {}, flags: {} })),
      portal: portalSettingsOf(loadServerConfig({ env: {}, flags: {} })),
    },
    createLogger("silent"),
  );
  const call = (
    method: "GET" | "POST" | "PATCH",
    url: string,
    body?: unknown,
    idempotencyKey?: string,
  ) =>
    app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }),
      },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  return {
    db,
    store,
    /** Publishes an event whose object carries `padding` characters. */
    publish: (padding = 0, idempotencyKey?: string) =>
      call(
        "POST",
        `/v1/workspaces/${workspaceId}/events`,
        { type: "job.completed", data: { object: { id: "job_1", padding: "x".repeat(padding) } } },
        idempotencyKey,
      ),
    deactivate: () =>
      call("PATCH", `/v1/workspaces/${workspaceId}/webhooks/dst_storage`, { active: false }),
    readyz: () => call("GET", "/readyz"),
    async close() {
      await app.close();
      await store.close();
    },
  };
}

type Answer = Awaited<ReturnType<Awaited<ReturnType<typeof apiOn>>["readyz"]>>;

function assertStorageFull(answer: Answer, what: string): void {
  assert.equal(answer.statusCode, 503, `${what}: ${answer.body}`);
  assert.equal(answer.json<{ error: { code: string } }>().error.code, "storage_full", what);
  assert.equal(answer.headers["retry-after"], "30", `${what} says when to try again`);
}

describe("a full disk on a small file system (SQLite)", () => {
  let disk: SmallDisk | string = "not mounted";
  let api: Awaited<ReturnType<typeof apiOn>>;

  before(async () => {
    if (testBackend !== "sqlite") return;
    disk = await mountSmallDisk(8);
    if (typeof disk === "string") return;
    api = await apiOn(join(disk.path, "svc.db"));
  });
  after(async () => {
    if (typeof disk === "string") return;
    await api.close();
    await disk.cleanup();
  });

  it("answers 503 storage_full with Retry-After, /readyz too, and recovers once space is freed", async (t) => {
    if (testBackend !== "sqlite") {
      t.skip("the SQLite run only");
      return;
    }
    if (typeof disk === "string") {
      t.skip(disk);
      return;
    }
    assert.equal((await api.publish()).statusCode, 202);
    // An empty WAL: the next write must take new space, not reuse the file's old frames.
    await api.db.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    await disk.fill();

    assertStorageFull(await api.publish(), "a publish");
    assertStorageFull(await api.publish(0, "key-1"), "a publish with an Idempotency-Key");
    assertStorageFull(await api.deactivate(), "a change");
    assert.notEqual(api.store.health.storageFullSince(), null);
    assertStorageFull(await api.readyz(), "/readyz");

    await disk.free();
    assert.equal((await api.readyz()).statusCode, 200, "ready again: its write succeeded");
    assert.equal(api.store.health.storageFullSince(), null);
    assert.equal((await api.publish()).statusCode, 202);
    assert.equal((await api.publish(0, "key-1")).statusCode, 202, "the key was not kept");
    assert.equal((await api.deactivate()).statusCode, 200);
  });
});

/**
 * The engine's own disk-full error at will: on SQLite `max_page_count` (SQLITE_FULL once the
 * file would grow), on PostgreSQL SQLSTATE 53100 from every write (`postgresDiskFull`).
 */
describe("storage_full from the database engine", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let location: string;
  let api: Awaited<ReturnType<typeof apiOn>>;

  const fillEngine = async (db: Database): Promise<{ free(): Promise<void> }> => {
    if (testBackend === "postgres") return postgresDiskFull(location);
    const [row] = await db.query<{ page_count: number }>("PRAGMA page_count");
    await db.execute(`PRAGMA max_page_count = ${row?.page_count ?? 1}`);
    return { free: () => db.execute("PRAGMA max_page_count = 1073741823").then(() => undefined) };
  };

  before(async () => {
    dir = await tempDir();
    location = await testDatabaseLocation(join(dir.path, "engine"));
    api = await apiOn(location);
  });
  after(async () => {
    await api.close();
    await dir.cleanup();
  });

  it("answers a publish 503 storage_full with Retry-After while the disk is full, 202 after", async () => {
    const full = await fillEngine(api.db);
    try {
      // Large enough that SQLite needs pages it may not have.
      assertStorageFull(await api.publish(200_000), "a publish");
    } finally {
      await full.free();
    }
    assert.equal((await api.publish(200_000)).statusCode, 202);
    assert.equal(
      api.store.health.storageFullSince(),
      null,
      "the successful write cleared the state",
    );
  });

  it("is not ready while writes fail for lack of space, and ready once one succeeds", async (t) => {
    // On SQLite `max_page_count` lets a write that needs no new page through, /readyz's
    // probe among them: the small file system above covers SQLite.
    if (testBackend !== "postgres") {
      t.skip("the PostgreSQL run only");
      return;
    }
    const full = await fillEngine(api.db);
    try {
      assertStorageFull(await api.deactivate(), "a change");
      assertStorageFull(await api.readyz(), "/readyz");
    } finally {
      await full.free();
    }
    assert.equal((await api.readyz()).statusCode, 200);
    assert.equal((await api.deactivate()).statusCode, 200);
  });
});

describe("every 503 carries Retry-After", () => {
  it("/readyz answers 503 service_unavailable with Retry-After when the database does not answer", async () => {
    const dir = await tempDir();
    try {
      const api = await apiOn(await testDatabaseLocation(join(dir.path, "gone")));
      await api.db.close();
      const answer = await api.readyz();
      assert.equal(answer.statusCode, 503);
      assert.equal(answer.json<{ error: { code: string } }>().error.code, "service_unavailable");
      assert.equal(answer.headers["retry-after"], "5");
    } finally {
      await dir.cleanup();
    }
  });
});
