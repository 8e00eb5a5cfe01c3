import type { ClaimedDelivery, NewEvent } from "../../interfaces.ts";
import {
  perDatabase,
  TableParam,
  type Database,
  type SqlExecutor,
  type SqlValue,
  type TableColumn,
} from "../database.ts";
import { type ClaimedRow, insertLeaseSql, toClaimedDelivery } from "./deliveries.ts";

/** Deliveries to write already claimed: the first `limit` of the batch, in publish order. */
export interface PublishLease {
  readonly token: string;
  readonly until: number;
  readonly limit: number;
  /** Destinations whose deliveries the lease does not take. */
  readonly excludedDestinations: readonly string[];
}

export interface PublishedBatch {
  /**
   * How many deliveries each event queued, in the events' order; for an event refused because
   * it would reach more than the fan-out limit (nothing of it written), null.
   */
  readonly queued: (number | null)[];
  /** The refused events' fan-outs, by their position in the batch. */
  readonly refused: ReadonlyMap<number, number>;
  /**
   * The positions of the events whose workspace no longer exists (deleted while they were on
   * their way): nothing of them written, and the others go on.
   */
  readonly gone: ReadonlySet<number>;
  /** The deliveries written under the lease, claimed, in publish order. */
  readonly handed: ClaimedDelivery[];
}

const batchColumns: readonly TableColumn[] = [
  ["id", "TEXT"],
  ["workspace_id", "TEXT"],
  ["type", "TEXT"],
  ["body", "TEXT"],
  ["api_version", "TEXT"],
  ["created_at", "BIGINT"],
  ["position", "INTEGER"],
  ["traceparent", "TEXT"],
];

/** The batch's events as a table, in publish order (`position`), in parameter `placeholder`. */
function batchTable(db: Database, placeholder: string): string {
  return `batch AS (${db.tableOfRows(placeholder, batchColumns)})`;
}

/** The batch's events, for `batchTable`: one parameter. */
function batchValue(events: readonly NewEvent[]): TableParam {
  return new TableParam(
    events.map((event, position): SqlValue[] => [
      event.id,
      event.workspaceId,
      event.type,
      event.body,
      event.apiVersion,
      event.createdAt.getTime(),
      position,
      event.traceparent ?? null,
    ]),
  );
}

/**
 * What routes an event to its deliveries, without its body: SQLite's fan-out count reads the
 * first three columns and its deliveries' INSERT all five, from one JSON parameter
 * (`routingValue`) made once per batch. The body is in the events' INSERT alone: a batch of
 * large bodies is not unpacked again for each statement (decision 54).
 */
const routingColumns: readonly TableColumn[] = [
  ["workspace_id", "TEXT"],
  ["type", "TEXT"],
  ["position", "INTEGER"],
  ["id", "TEXT"],
  ["created_at", "BIGINT"],
];

/** The batch's events as `routingColumns`, in publish order. */
function routingValue(events: readonly NewEvent[]): TableParam {
  return new TableParam(
    events.map((event, position): SqlValue[] => [
      event.workspaceId,
      event.type,
      position,
      event.id,
      event.createdAt.getTime(),
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
  return `${matchedCte(db, false)}, ${numberedCte("matched")}
     ${deliveriesInsert}`;
}

/**
 * The CTE `matched`: a row per delivery the batch would queue. With `forWorker` (PostgreSQL's
 * one statement), also what a worker needs of its destination, so that the statement returns
 * it without reading the destination again, and the destination's kind, which its fan-out
 * counts; SQLite reads those after its INSERT (`handedOf`), and sorts less without them.
 */
function matchedCte(db: Database, forWorker: boolean): string {
  const destination = forWorker
    ? "d.url, d.active, d.deleted_at, d.secret_ciphertext, d.circuit_opens, d.kind,"
    : "";
  return `matched AS (
       SELECT b.id AS event_id, d.id AS destination_id, b.workspace_id, b.type, b.created_at,
              b.position, d.seq AS destination_seq, ${destination}
              CASE WHEN d.circuit_open_until > b.created_at THEN d.circuit_open_until
                   ELSE b.created_at END AS due_at,
              CASE WHEN d.circuit_opens = 0 AND d.kind = 'webhook'
                    AND d.id NOT IN (${db.textsOfJsonArray("$5")}) THEN 1 ELSE 0 END AS takeable,
              CASE WHEN d.kind = 'listen' THEN 1 ELSE 0 END AS listen
       FROM batch b
       JOIN destinations d ON d.workspace_id = b.workspace_id
       WHERE d.active = $1 AND d.deleted_at IS NULL
         AND EXISTS (SELECT 1 FROM destination_events s
                     WHERE s.destination_id = d.id AND s.event IN (b.type, '*')))`;
}

/** The CTE `numbered`: the deliveries of `source` (`matched`, or what is kept of it) in order. */
function numberedCte(source: string): string {
  return `numbered AS (
       SELECT matched.*,
              ROW_NUMBER() OVER (PARTITION BY takeable ORDER BY position, destination_seq) AS n
       FROM ${source})`;
}

const deliveriesInsert = `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
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
     RETURNING seq, event_id, destination_id, event_type, attempts, retry_base, lease_owner,
               listen_due_at`;

/**
 * The transactional outbox, for a batch of events: the events and their deliveries are one
 * change, committed (durably) before this resolves. Each matching destination gets one
 * pending delivery of each event, due at once, or, for the first \`lease.limit\` of them,
 * claimed under \`lease\` as \`claimDueDeliveries\` would claim them, and returned ready to send.
 * An event that would reach more webhook destinations than its \`fanOutLimits\` entry (decision
 * 39) is refused whole: neither it nor any delivery of it is written, and the others go on.
 * PostgreSQL counts in the statement that writes (from the deliveries it matched), SQLite from
 * the deliveries it wrote, or before its writes for a workspace that was refused before.
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
  fanOutLimits: readonly number[],
  /** By position, the most destinations each event's workspace may hold (SQLite's undo copies). */
  reaches: readonly number[] = [],
): Promise<PublishedBatch> {
  if (events.length === 0) return { queued: [], refused: new Map(), gone: new Set(), handed: [] };
  if (db.writesInCtes) {
    const written = await writeInOneStatement(db, events, lease, fanOutLimits);
    return summary(events, written.refused, written, written.gone);
  }
  try {
    return await publishInTransaction(db, events, lease, fanOutLimits, reaches);
  } catch (error) {
    // SQLite checks events' foreign key to their workspace. A workspace deleted after its
    // caller was let in takes none of the other workspaces' events down with its own: the
    // batch is written again without them.
    if (!isForeignKeyViolation(error)) throw error;
    const gone = await goneWorkspaces(db, events);
    if (gone.size === 0) throw error;
    return withGone(
      events,
      gone,
      await publishEvents(
        db,
        events.filter((event) => !gone.has(event.workspaceId)),
        lease,
        fanOutLimits.filter((_limit, position) => !gone.has(events[position]?.workspaceId ?? "")),
        reaches.filter((_reach, position) => !gone.has(events[position]?.workspaceId ?? "")),
      ),
    );
  }
}

/**
 * The most destinations a publish batch may reach for its transaction to count as bounded
 * (decision 62). SQLite copies, to undo the deliveries' INSERT, the leaf of each destination's
 * range in `deliveries_by_destination` that it adds to: up to one page (4 KiB) per destination
 * reached, 64 MiB here, kept in memory for a bounded transaction. An event's reach is its
 * workspace's destination limit, not its fan-out limit: an event over that limit is written
 * whole before it is refused. A batch that may reach more, or whose reach is not known, has
 * SQLite spill its copies to temporary files, as any other transaction does.
 */
const boundedReach = 16_384;

/**
 * Whether a batch's events together may reach at most `boundedReach` destinations: the events
 * of one workspace reach its destinations, so each workspace counts once.
 */
function undoCopiesBounded(events: readonly NewEvent[], reaches: readonly number[]): boolean {
  const byWorkspace = new Map<string, number>();
  for (const [position, event] of events.entries()) {
    const reach = reaches[position] ?? Number.POSITIVE_INFINITY;
    byWorkspace.set(event.workspaceId, Math.max(byWorkspace.get(event.workspaceId) ?? 0, reach));
  }
  let reach = 0;
  for (const workspaceReach of byWorkspace.values()) reach += workspaceReach;
  return reach <= boundedReach;
}

/** SQLite: a publish's writes, each event's fan-out counted (`publishEvents`). */
async function publishInTransaction(
  db: Database,
  events: readonly NewEvent[],
  lease: PublishLease | null,
  fanOutLimits: readonly number[],
  reaches: readonly number[],
): Promise<PublishedBatch> {
  // SQLite writes the batch and counts each event's fan-out from the deliveries it wrote; an
  // event over its limit takes the batch back to the savepoint, and the others are written
  // again without it. A count before the writes cost a statement of the publish's own join on
  // every batch (decision 59); it is kept for a batch with an event of a workspace that was
  // refused before, which would otherwise pay a whole write, undone, on each publish.
  const refusedBefore = workspacesRefused(db);
  const options = { bounded: undoCopiesBounded(events, reaches) };
  if (events.some((event) => refusedBefore.has(event.workspaceId))) {
    return db.transaction(async (tx) => {
      const routing = routingValue(events);
      const refused = await selectRefusedFanOuts(db, tx, routing, fanOutLimits);
      return summary(events, refused, await writeKept(db, tx, events, refused, lease, routing));
    }, options);
  }
  return db.transaction(async (tx) => {
    await tx.execute("SAVEPOINT fan_out");
    const written = await writeInTransaction(db, tx, events, routingValue(events), lease);
    const refused = fanOutsOver(events, written.rows, fanOutLimits);
    if (refused.size === 0) {
      await tx.execute("RELEASE fan_out");
      return summary(events, refused, written);
    }
    await tx.execute("ROLLBACK TO fan_out");
    await tx.execute("RELEASE fan_out");
    if (refusedBefore.size >= maxWorkspacesRefused) refusedBefore.clear();
    for (const position of refused.keys()) {
      const event = events[position];
      if (event !== undefined) refusedBefore.add(event.workspaceId);
    }
    return summary(events, refused, await writeKept(db, tx, events, refused, lease));
  }, options);
}

/**
 * SQLite: the batch's events but the refused ones, written in `tx`; `routing` is the whole
 * batch's `routingValue`, if made already, which serves when none is refused.
 */
async function writeKept(
  db: Database,
  tx: SqlExecutor,
  events: readonly NewEvent[],
  refused: ReadonlyMap<number, number>,
  lease: PublishLease | null,
  routing?: TableParam,
): Promise<{ rows: WrittenRow[]; handed: ClaimedDelivery[] }> {
  if (refused.size === 0) {
    return writeInTransaction(db, tx, events, routing ?? routingValue(events), lease);
  }
  const kept = events.filter((_event, position) => !refused.has(position));
  if (kept.length === 0) return { rows: [], handed: [] };
  return writeInTransaction(db, tx, kept, routingValue(kept), lease);
}

/**
 * The workspaces an event of which this process refused for its fan-out (SQLite), whose
 * batches are counted before they are written; forgotten all at once past
 * `maxWorkspacesRefused`.
 */
const workspacesRefused = perDatabase(() => new Set<string>());
const maxWorkspacesRefused = 10_000;

/**
 * The events of a batch that would reach more than \`limit\` webhook destinations (active, not
 * deleted, subscribed to the type or to \`*\`): each one's position in the batch and how many.
 * Listen sessions are not counted: they have their own bound (decision 34). The events go as
 * their workspaces and types alone, never their bodies. `routing` is the batch's
 * `routingValue`.
 */
async function selectFanOutsOver(
  db: Database,
  executor: SqlExecutor,
  routing: TableParam,
  limit: number,
): Promise<Map<number, number>> {
  const rows = await executor.query<{ position: number | string; fan_out: number | string }>(
    fanOutsOverSql(db),
    [routing, true, limit],
  );
  return new Map(rows.map((row) => [Number(row.position), Number(row.fan_out)]));
}

const fanOutsOverSql = perDatabase(
  (db) => `WITH batch AS (${db.tableOfRows("$1", routingColumns.slice(0, 3))})
     SELECT b.position, COUNT(*) AS fan_out
     FROM batch b
     JOIN destinations d ON d.workspace_id = b.workspace_id
     WHERE d.active = $2 AND d.deleted_at IS NULL AND d.kind = 'webhook'
       AND EXISTS (SELECT 1 FROM destination_events s
                   WHERE s.destination_id = d.id AND s.event IN (b.type, '*'))
     GROUP BY b.position
     HAVING COUNT(*) > $3`,
);

/**
 * The events over their own fan-out limit, by position, with their fan-outs: those the
 * smallest limit of the batch lets through to the count, judged each by its own.
 */
async function selectRefusedFanOuts(
  db: Database,
  executor: SqlExecutor,
  routing: TableParam,
  fanOutLimits: readonly number[],
): Promise<Map<number, number>> {
  const smallest = Math.min(...fanOutLimits);
  const over = await selectFanOutsOver(db, executor, routing, smallest);
  for (const [position, fanOut] of over) {
    if (fanOut <= (fanOutLimits[position] ?? smallest)) over.delete(position);
  }
  return over;
}

function summary(
  events: readonly NewEvent[],
  refused: ReadonlyMap<number, number>,
  written: { rows: readonly WrittenRow[]; handed: ClaimedDelivery[] },
  gone: ReadonlySet<number> = new Set(),
): PublishedBatch {
  const counts = new Map<string, number>();
  for (const { event_id } of written.rows) counts.set(event_id, (counts.get(event_id) ?? 0) + 1);
  const queued = events.map((event, position) =>
    refused.has(position) || gone.has(position) ? null : (counts.get(event.id) ?? 0),
  );
  return { queued, refused, gone, handed: written.handed };
}

/** Whether `error` is SQLite's refusal of a row whose foreign key names no row. */
function isForeignKeyViolation(error: unknown): boolean {
  // SQLITE_CONSTRAINT_FOREIGNKEY, the extended code node:sqlite reports, or its message.
  const { errcode, message } = (error ?? {}) as { errcode?: unknown; message?: unknown };
  return errcode === 787 || (typeof message === "string" && message.includes("FOREIGN KEY"));
}

/** The workspaces of `events` that no longer exist. */
async function goneWorkspaces(db: Database, events: readonly NewEvent[]): Promise<Set<string>> {
  const ids = [...new Set(events.map((event) => event.workspaceId))];
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM workspaces WHERE ${db.inJsonTexts("id", "$1")}`,
    [JSON.stringify(ids)],
  );
  const live = new Set(rows.map((row) => row.id));
  return new Set(ids.filter((id) => !live.has(id)));
}

/**
 * The batch `events`' summary from `kept`'s, that of its events but those of the `gone`
 * workspaces, published on their own.
 */
function withGone(
  events: readonly NewEvent[],
  gone: ReadonlySet<string>,
  kept: PublishedBatch,
): PublishedBatch {
  const queued: (number | null)[] = [];
  const refused = new Map<number, number>();
  const gonePositions = new Set<number>();
  let keptPosition = 0;
  for (const [position, event] of events.entries()) {
    if (gone.has(event.workspaceId)) {
      gonePositions.add(position);
      queued.push(null);
      continue;
    }
    queued.push(kept.queued[keptPosition] ?? null);
    const fanOut = kept.refused.get(keptPosition);
    if (fanOut !== undefined) refused.set(position, fanOut);
    // A workspace deleted between the two writes is gone from the second.
    if (kept.gone.has(keptPosition)) gonePositions.add(position);
    keptPosition += 1;
  }
  return { queued, refused, gone: gonePositions, handed: kept.handed };
}

type WrittenRow = ClaimedRow & {
  lease_owner: string | null;
  listen_due_at?: number | string | null;
};

/**
 * The events of a batch written with more webhook deliveries than their limits allow
 * (\`fanOutLimits\`, by position), with those counts: a listen session's delivery (its
 * \`listen_due_at\` set) is not counted, as it has its own bound (decision 34).
 */
function fanOutsOver(
  events: readonly NewEvent[],
  rows: readonly WrittenRow[],
  fanOutLimits: readonly number[],
): Map<number, number> {
  const counts = new Map<string, number>();
  for (const row of rows) {
    if (row.listen_due_at === null || row.listen_due_at === undefined) {
      counts.set(row.event_id, (counts.get(row.event_id) ?? 0) + 1);
    }
  }
  const smallest = Math.min(...fanOutLimits);
  const over = new Map<number, number>();
  for (const [position, event] of events.entries()) {
    const fanOut = counts.get(event.id) ?? 0;
    if (fanOut > (fanOutLimits[position] ?? smallest)) over.set(position, fanOut);
  }
  return over;
}

function leaseValues(lease: PublishLease | null): SqlValue[] {
  return [
    true,
    lease?.limit ?? 0,
    lease?.until ?? 0,
    lease?.token ?? null,
    JSON.stringify(lease?.excludedDestinations ?? []),
  ];
}

/**
 * PostgreSQL: the events and their deliveries in one statement (the events' INSERT a CTE),
 * which also counts each event's fan-out from the deliveries it matched and leaves out the
 * events over their limit ($7, by position), returned as rows of their own
 * (\`refused_position\`, \`fan_out\`), and those of workspaces no longer there (\`fan_out\`
 * null). It holds each workspace of the batch (\`live\`: \`FOR KEY SHARE\`, once a workspace),
 * as the events' foreign key did once an event (decision 60): a workspace's deletion, which
 * holds its row \`FOR UPDATE\`, waits for the publish to commit and deletes its events, or the
 * publish waits for the deletion and writes nothing of the workspace. The deliveries it hands to
 * the publish's worker come back without their event's body and trace context, which are the
 * batch's own (decision 61).
 */
async function writeInOneStatement(
  db: Database,
  events: readonly NewEvent[],
  lease: PublishLease | null,
  fanOutLimits: readonly number[],
): Promise<{
  rows: WrittenRow[];
  handed: ClaimedDelivery[];
  refused: Map<number, number>;
  gone: Set<number>;
}> {
  const smallest = Math.min(...fanOutLimits);
  const all = await db.query<
    WrittenRow & { refused_position: number | null; fan_out: number | string | null }
  >(oneStatementSql(db), [
    ...leaseValues(lease),
    batchValue(events),
    JSON.stringify(events.map((_event, position) => fanOutLimits[position] ?? smallest)),
  ]);
  const refused = new Map<number, number>();
  const gone = new Set<number>();
  const rows: WrittenRow[] = [];
  for (const row of all) {
    if (row.refused_position === null) rows.push(row);
    else if (row.fan_out === null) gone.add(row.refused_position);
    else refused.set(row.refused_position, Number(row.fan_out));
  }
  for (const position of gone) refused.delete(position);
  const token = lease?.token ?? "";
  const byId = new Map(events.map((event) => [event.id, event]));
  const handed: ClaimedDelivery[] = [];
  for (const row of rows) {
    if (row.lease_owner === null) continue;
    // The body and trace context are the batch's own: the statement does not send them back.
    const event = batchEventOf(byId, row);
    row.body = event.body;
    row.traceparent = event.traceparent ?? null;
    handed.push(toClaimedDelivery(row, token));
  }
  return { rows, handed, refused, gone };
}

/** The statement of `writeInOneStatement`. */
const oneStatementSql = perDatabase(
  (db) => `WITH ${batchTable(db, "$6")},
     live AS (SELECT id FROM workspaces
              WHERE id = ANY (ARRAY(SELECT workspace_id FROM batch)) FOR KEY SHARE),
     ${matchedCte(db, true)},
     refused AS (
       SELECT m.position, COUNT(*) AS fan_out
       FROM matched m
       JOIN (SELECT CAST(l.value AS BIGINT) AS fan_out_limit, l.ordinality - 1 AS position
             FROM jsonb_array_elements_text(CAST($7 AS JSONB)) WITH ORDINALITY l) l
         ON l.position = m.position
       WHERE m.kind = 'webhook'
       GROUP BY m.position, l.fan_out_limit
       HAVING COUNT(*) > l.fan_out_limit
       UNION ALL
       SELECT position, NULL FROM batch WHERE workspace_id NOT IN (SELECT id FROM live)),
     ev AS (INSERT INTO events (id, workspace_id, type, body, api_version, created_at,
                        traceparent)
            SELECT id, workspace_id, type, body, api_version, created_at, traceparent
            FROM batch WHERE position NOT IN (SELECT position FROM refused)
            ORDER BY position
            RETURNING id),
     ${numberedCte("matched WHERE position NOT IN (SELECT position FROM refused)")},
     ins AS (${deliveriesInsert}),
     held AS (INSERT INTO delivery_leases (lease, expires_at, seqs)
              SELECT CAST($4 AS TEXT), CAST($3 AS BIGINT), CAST(json_agg(seq ORDER BY seq) AS TEXT)
              FROM ins
              WHERE lease_owner IS NOT NULL HAVING COUNT(*) > 0)
     SELECT ins.seq, ins.event_id, ins.event_type, ins.attempts, ins.retry_base, ins.lease_owner,
            m.destination_id, m.url, m.active, m.deleted_at, m.secret_ciphertext,
            m.workspace_id, m.circuit_opens,
            CAST(NULL AS INTEGER) AS refused_position, CAST(NULL AS BIGINT) AS fan_out
     FROM ins
     JOIN numbered m ON m.event_id = ins.event_id AND m.destination_id = ins.destination_id
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
            position, fan_out
     FROM refused
     ORDER BY seq`,
);

/**
 * SQLite: the two INSERTs, in the caller's transaction, and what the worker needs of the
 * deliveries handed to it (`handedOf`); the deliveries' INSERT reads the batch's `routing`
 * (its `routingValue`), not its bodies.
 */
async function writeInTransaction(
  db: Database,
  tx: SqlExecutor,
  events: readonly NewEvent[],
  routing: TableParam,
  lease: PublishLease | null,
): Promise<{ rows: WrittenRow[]; handed: ClaimedDelivery[] }> {
  await tx.execute(insertEventsSql(db), [batchValue(events)]);
  const rows = await tx.query<WrittenRow>(insertRoutedDeliveriesSql(db), [
    ...leaseValues(lease),
    routing,
  ]);
  const leased = rows
    .filter((row) => row.lease_owner !== null)
    .sort((a, b) => Number(a.seq) - Number(b.seq));
  if (lease === null || leased.length === 0) return { rows, handed: [] };
  const seqs = leased.map((row) => Number(row.seq));
  await tx.execute(insertLeaseSql, [lease.token, lease.until, JSON.stringify(seqs)]);
  return { rows, handed: await handedOf(db, tx, events, leased, lease.token) };
}

/**
 * SQLite: the deliveries `leased` to the publish's worker as a claim returns them, in `seq`
 * order: the event's body and trace context from the batch itself, and each destination read
 * once, in the same transaction as the INSERT that matched it. A claim's SELECT
 * (`selectClaimed`) reads the delivery, its event and its destination again for each row.
 */
async function handedOf(
  db: Database,
  tx: SqlExecutor,
  events: readonly NewEvent[],
  leased: readonly WrittenRow[],
  lease: string,
): Promise<ClaimedDelivery[]> {
  const ids = [...new Set(leased.map((row) => row.destination_id))];
  const destinations = new Map(
    (await tx.query<HandedDestination>(handedDestinationsSql(db), [JSON.stringify(ids)])).map(
      (row) => [row.id, row],
    ),
  );
  const byId = new Map(events.map((event) => [event.id, event]));
  return leased.map((row) => {
    const event = batchEventOf(byId, row);
    const destination = destinations.get(row.destination_id);
    if (destination === undefined)
      throw new Error(`delivery ${row.seq} was written for a destination not found`);
    return toClaimedDelivery(
      {
        seq: row.seq,
        event_id: row.event_id,
        event_type: row.event_type,
        attempts: row.attempts,
        retry_base: row.retry_base,
        body: event.body,
        traceparent: event.traceparent ?? null,
        destination_id: destination.id,
        url: destination.url,
        active: destination.active,
        deleted_at: destination.deleted_at,
        secret_ciphertext: destination.secret_ciphertext,
        workspace_id: destination.workspace_id,
        circuit_opens: destination.circuit_opens,
      },
      lease,
    );
  });
}

/** The event of the batch (`byId`, by event id) that `row`, a delivery just written, is of. */
function batchEventOf(byId: ReadonlyMap<string, NewEvent>, row: WrittenRow): NewEvent {
  const event = byId.get(row.event_id);
  if (event === undefined)
    throw new Error(`delivery ${row.seq} was written for an event not in its batch`);
  return event;
}

/** A destination as a claim's row holds it (`ClaimedRow`), with its id. */
type HandedDestination = Pick<
  ClaimedRow,
  "url" | "active" | "deleted_at" | "secret_ciphertext" | "workspace_id" | "circuit_opens"
> & { id: string };

const handedDestinationsSql = perDatabase(
  (db) => `SELECT id, url, active, deleted_at, secret_ciphertext, workspace_id, circuit_opens
     FROM destinations WHERE ${db.inJsonTexts("id", "$1")}`,
);

const insertEventsSql = perDatabase(
  (db) => `WITH ${batchTable(db, "$1")}
     INSERT INTO events (id, workspace_id, type, body, api_version, created_at, traceparent)
     SELECT id, workspace_id, type, body, api_version, created_at, traceparent
     FROM batch ORDER BY position`,
);

const insertRoutedDeliveriesSql = perDatabase(
  (db) => `WITH batch AS (${db.tableOfRows("$6", routingColumns)}), ${insertDeliveries(db)}`,
);

/**
 * A test event (decision 40): the event and one pending delivery to `destinationId` alone,
 * whatever it subscribes to, in one transaction (the outbox, as any publish), due at once or
 * when the destination's circuit ends. Not batched with publishes: tests are rare, and the
 * publish statement stays as it is. Its delivery is marked `test` here, so that the log reads
 * it from the delivery's row; a publish leaves the column's default. Returns whether the
 * delivery was queued (false: the destination is not an active webhook of the event's
 * workspace, and nothing was written).
 */
export async function publishTestEvent(
  db: Database,
  event: NewEvent,
  destinationId: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const created = event.createdAt.getTime();
    // PostgreSQL holds the workspace until the commit, as the publish does (decision 60);
    // SQLite's events have a foreign key to it, and its write transactions run one at a time.
    const holdWorkspace = db.dialect === "postgres" ? "FOR KEY SHARE OF w" : "";
    const [destination] = await tx.query<{ due_at: number | string }>(
      `SELECT CASE WHEN d.circuit_open_until > $3 THEN d.circuit_open_until ELSE $3 END
                AS due_at
       FROM destinations d JOIN workspaces w ON w.id = d.workspace_id
       WHERE d.id = $1 AND d.workspace_id = $2 AND d.active = $4 AND d.deleted_at IS NULL
         AND d.kind = 'webhook' ${holdWorkspace}`,
      [destinationId, event.workspaceId, created, true],
    );
    if (destination === undefined) return false;
    await tx.execute(
      `INSERT INTO events (id, workspace_id, type, body, api_version, created_at,
                           test_destination_id, traceparent)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        event.id,
        event.workspaceId,
        event.type,
        event.body,
        event.apiVersion,
        created,
        destinationId,
        event.traceparent ?? null,
      ],
    );
    await tx.execute(
      `INSERT INTO deliveries (event_id, destination_id, workspace_id, event_type, status,
                               attempts, next_attempt_at, created_at, updated_at, test)
       VALUES ($1, $2, $3, $4, 'pending', 0, $5, $6, $6, $7)`,
      [
        event.id,
        destinationId,
        event.workspaceId,
        event.type,
        Number(destination.due_at),
        created,
        true,
      ],
    );
    return true;
  });
}
