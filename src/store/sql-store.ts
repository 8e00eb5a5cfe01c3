import type { Clock, Store } from "../interfaces.ts";
import { ApiKeyCache } from "./api-key-cache.ts";
import { SqlCredentialStore } from "./credential-store.ts";
import type { Database } from "./database.ts";
import { SqlDeliveryLog } from "./delivery-log.ts";
import { SqlDeliveryQueue } from "./delivery-queue.ts";
import { SqlDestinationStore } from "./destination-store.ts";
import { SqlEncryptionKeyStore } from "./encryption-key-store.ts";
import { SqlHousekeeping } from "./housekeeping.ts";
import { SqlIdempotencyStore } from "./idempotency-store.ts";
import { SqlListenSessions } from "./listen-sessions.ts";
import { SqlOperations } from "./operations.ts";
import { SqlPortalAccess } from "./portal-access.ts";
import { SqlStorageHealth } from "./storage-health.ts";
import { SqlWorkspaceStore } from "./workspace-store.ts";

/**
 * The Store over any `Database`: each slice's SQL lives in `./sql/`, one module per
 * resource, and is the same for SQLite and PostgreSQL. Nothing here knows which engine runs it.
 */
export class SqlStore implements Store {
  readonly #db: Database;
  readonly destinations: SqlDestinationStore;
  readonly queue: SqlDeliveryQueue;
  readonly log: SqlDeliveryLog;
  readonly credentials: SqlCredentialStore;
  readonly idempotency: SqlIdempotencyStore;
  readonly housekeeping: SqlHousekeeping;
  readonly health: SqlStorageHealth;
  readonly encryptionKeys: SqlEncryptionKeyStore;
  readonly listen: SqlListenSessions;
  readonly workspaces: SqlWorkspaceStore;
  readonly portal: SqlPortalAccess;
  readonly operations: SqlOperations;

  constructor(db: Database, clock: Clock, options: { readonly batchLingerMs?: number } = {}) {
    this.#db = db;
    this.destinations = new SqlDestinationStore(db, clock);
    this.queue = new SqlDeliveryQueue(db, clock, options.batchLingerMs);
    this.operations = new SqlOperations(db, clock, () => {
      this.queue.announceQueued();
    });
    this.queue.tellOperations(this.operations);
    this.log = new SqlDeliveryLog(db, clock, () => {
      this.queue.announceQueued();
    });
    // One for both slices that change keys: either's change forgets what the other found.
    const keyCache = new ApiKeyCache(() => clock.now().getTime());
    this.credentials = new SqlCredentialStore(db, clock, keyCache);
    this.idempotency = new SqlIdempotencyStore(db, clock);
    this.housekeeping = new SqlHousekeeping(db, clock, this.operations);
    this.health = new SqlStorageHealth(db);
    this.encryptionKeys = new SqlEncryptionKeyStore(db, clock);
    this.listen = new SqlListenSessions(db, clock, this.queue, this.operations);
    this.workspaces = new SqlWorkspaceStore(db, clock, keyCache);
    this.portal = new SqlPortalAccess(db, clock);
  }

  async close(): Promise<void> {
    await Promise.all([this.queue.idle(), this.credentials.idle()]);
    await this.#db.close();
  }
}
