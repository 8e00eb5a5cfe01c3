import type { ClaimedDelivery, NewEvent } from "../../interfaces.ts";
import type { Database, JsonColumn, SqlValue } from "../database.ts";
import { type ClaimedRow, selectClaimed, toClaimedDelivery } from "./deliveries.ts";

/** Deliveries to write already claimed: the first `limit` of the batch, in publish order. */
export interface PublishLease {
  readonly token: string;
  readonly until: number;
  readonly limit: number;
  /** Destinations whose deliveries the lease does not take. */
  readonly excludedDestinations: readonly string[];
}

export interface PublishedBatch {
  /** How many deliveries each event queued, in the events' order. */
  readonly queued: number[];
  /** The deliveries written under the lease, claimed, in publish order. */
  readonly handed: ClaimedDelivery[];
}

const batchColumns: readonly JsonColumn[] = [
  ["id", "TEXT"],
  ["workspace_id", "TEXT"],
  ["type", "TEXT"],
  ["body", "TEXT"],
  ["api_version", "TEXT"],
  ["created_at", "BIGINT"],
  ["position", "INTEGER"],
];

/** The batch's events as a table, in publish order (`position`), in parameter `placeholder`. */
function batchTable(db: Database, placeholder: string): string {
  return `batch AS (${db.tableOfJsonRows(placeholder, batchColumns)})`;
}

/** The batch's events, for `batchTable`: one JSON parameter. */
function batchValue(events: readonly NewEvent[]): string {
  return JSON.stringify(
    events.map((event, position): SqlValue[] => [
      event.id,
      event.workspaceId,
      event.type,
      event.body,
      event.apiVersion,
      event.createdAt.getTime(),
      position,
    ]),
  );
}

/**
 * The deliveries of the batch, one per matching destination (active, not deleted, subscribed
 * to the type or to \`*\`), in publish order so that their \`seq\`s run in it: due at once (or
 * when the destination's circuit closes, if it is open), or, for the first \`$2\` of those the
 * lease may take, claimed until \`$3\` under the lease \`$4\`. The lease takes none of a
 * destination in \`$5\` (a JSON array of ids) nor of one whose circuit is open or half-open.
 * A listen session's delivery (decision 34) is due at \`listen_due_at\` instead, never leased.
 * Parameters: $1 true, $2–$5 the lease (0, 0, null, [] for none), the batch $6.
 */
function insertDeliveries(db: Database): string {
  return `matched AS (
       SELECT b.id AS event_id, d.id AS destination_id, b.workspace_id, b.type, b.created_at,
              b.position, d.seq AS destination_seq,
              CASE WHEN d.circuit_open_until > b.created_at THEN d.circuit_open_until
                   ELSE b.created_at END AS due_at,
              CASE WHEN d.circuit_opens = 0 AND d.kind = 'webhook'
                    AND d.id NOT IN (${db.textsOfJsonArray("$5")}) THEN 1 ELSE 0 END AS takeable,
              CASE WHEN d.kind = 'listen' THEN 1 ELSE 0 END AS listen
       FROM batch b
       JOIN destinations d ON d.workspace_id = b.workspace_id
       WHERE d.active = $1 AND d.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM destination_events s
                     WHERE s.destination_id = d.id AND s.event IN (b.type, '*'))),
     numbered AS (
       SELECT matched.*,
              ROW_NUMBER() OVER (PARTITION BY takeable ORDER BY position, destination_seq) AS n
       FROM matched)
     INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
                             attempts, next_attempt_at, lease_owner, created_at, updated_at,
                             listen_due_at)
     SELECT event_id, destination_id, workspace_id, type, 'pending', 0,
            CASE WHEN takeable = 1 AND n <= $2 THEN CAST($3 AS BIGINT)
                 WHEN listen = 1 THEN NULL ELSE due_at END,
            CASE WHEN takeable = 1 AND n <= $2 THEN CAST($4 AS TEXT) END,
            created_at, created_at,
            CASE WHEN listen = 1 THEN created_at END
     FROM numbered
     ORDER BY position, destination_seq
     RETURNING seq, event_id, destination_id, event_type, attempts, retry_base, lease_owner`;
}

/**
 * The transactional outbox, for a batch of events: the events and their deliveries are one
 * change, committed (durably) before this resolves. Each matching destination gets one
 * pending delivery of each event, due at once, or, for the first \`lease.limit\` of them,
 * claimed under \`lease\` as \`claimDueDeliveries\` would claim them, and returned ready to send.
 *
 * The same SQL on both engines, in the form each runs fastest. PostgreSQL runs it as one
 * statement (the events' INSERT a data-modifying CTE), so a batch costs one round trip and
 * needs no BEGIN or COMMIT. SQLite cannot write in a CTE; it runs the two INSERTs and the
 * claim's SELECT in a transaction, where a statement costs no round trip.
 */
export async function publishEvents(
  db: Database,
  events: readonly NewEvent[],
  lease: PublishLease | null,
): Promise<PublishedBatch> {
  if (events.length === 0) return { queued: [], handed: [] };
  const leaseValues: SqlValue[] = [
    true,
    lease?.limit ?? 0,
    lease?.until ?? 0,
    lease?.token ?? null,
    JSON.stringify(lease?.excludedDestinations ?? []),
  ];
  const batch = batchValue(events);
  const token = lease?.token ?? "";
  let rows: (ClaimedRow & { lease_owner: string | null })[];
  let handed: ClaimedDelivery[];
  if (db.writesInCtes) {
    rows = await db.query(
      `WITH ${batchTable(db, "$6")},
       ev AS (INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
              SELECT id, workspace_id, type, body, api_version, created_at
              FROM batch ORDER BY position
              RETURNING id),
       ins AS (WITH ${insertDeliveries(db)})
       SELECT ins.seq, ins.event_id, ins.event_type, ins.attempts, ins.retry_base, ins.lease_owner,
              CASE WHEN ins.lease_owner IS NULL THEN NULL ELSE b.body END AS body,
              d.id AS destination_id, d.url, d.active, d.deleted_at, d.secret_ciphertext,
              d.workspace_id, d.circuit_opens
       FROM ins
       JOIN batch b ON b.id = ins.event_id
       JOIN destinations d ON d.id = ins.destination_id
       ORDER BY ins.seq`,
      [...leaseValues, batch],
    );
    handed = rows
      .filter((row) => row.lease_owner !== null)
      .map((row) => toClaimedDelivery(row, token));
  } else {
    ({ rows, handed } = await db.transaction(async (tx) => {
      await tx.execute(
        `WITH ${batchTable(db, "$1")}
         INSERT INTO events (id, workspace_id, type, body, api_version, created_at)
         SELECT id, workspace_id, type, body, api_version, created_at
         FROM batch ORDER BY position`,
        [batch],
      );
      const inserted = await tx.query<ClaimedRow & { lease_owner: string | null }>(
        `WITH ${batchTable(db, "$6")}, ${insertDeliveries(db)}`,
        [...leaseValues, batch],
      );
      const leased = inserted
        .filter((row) => row.lease_owner !== null)
        .map((row) => Number(row.seq))
        .sort((a, b) => a - b);
      return { rows: inserted, handed: await selectClaimed(db, tx, leased, token) };
    }));
  }
  const counts = new Map<string, number>();
  for (const { event_id } of rows) counts.set(event_id, (counts.get(event_id) ?? 0) + 1);
  return { queued: events.map((event) => counts.get(event.id) ?? 0), handed };
}

/**
 * A test event (decision 40): the event and one pending delivery to `destinationId` alone,
 * whatever it subscribes to, in one transaction (the outbox, as any publish), due at once or
 * when the destination's circuit ends. Not batched with publishes: tests are rare, and the
 * publish statement stays as it is. Returns whether the delivery was queued (false: the
 * destination is not an active webhook of the event's workspace, and nothing was written).
 */
export async function publishTestEvent(
  db: Database,
  event: NewEvent,
  destinationId: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const created = event.createdAt.getTime();
    const [destination] = await tx.query<{ due_at: number | string }>(
      `SELECT CASE WHEN circuit_open_until > $3 THEN circuit_open_until ELSE $3 END AS due_at
       FROM destinations
       WHERE id = $1 AND workspace_id = $2 AND active = $4 AND deleted_at IS NULL
         AND kind = 'webhook'`,
      [destinationId, event.workspaceId, created, true],
    );
    if (destination === undefined) return false;
    await tx.execute(
      `INSERT INTO events (id, workspace_id, type, body, api_version, created_at,
                           test_destination_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        event.id,
        event.workspaceId,
        event.type,
        event.body,
        event.apiVersion,
        created,
        destinationId,
      ],
    );
    await tx.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
                               attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', 0, $5, $6, $6)`,
      [event.id, destinationId, event.workspaceId, event.type, Number(destination.due_at), created],
    );
    return true;
  });
}
