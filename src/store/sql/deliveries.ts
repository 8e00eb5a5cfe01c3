import { randomBytes } from "node:crypto";
import type {
  AttemptRecord,
  AttemptReport,
  ClaimExclusions,
  ClaimRoom,
  ClaimedDelivery,
  DeliveryStatus,
  EventType,
  FailureReason,
  LastDelivery,
} from "../../interfaces.ts";
import {
  perDatabase,
  TableParam,
  type Database,
  type SqlExecutor,
  type SqlValue,
  type TableColumn,
} from "../database.ts";
import { toCircuitState } from "./circuits.ts";
import {
  addHourlyCountsSql,
  countAttemptsSql,
  hourlyCountColumns,
  hourlyCounts,
  type CountedAttempt,
} from "./count-attempts.ts";
import { toBoolean, toNullableDate } from "./rows.ts";

export interface ClaimedRow extends Record<string, unknown> {
  seq: number | string;
  event_id: string;
  event_type: EventType;
  attempts: number | string;
  retry_base: number | string;
  body: string;
  destination_id: string;
  url: string;
  active: number | boolean;
  deleted_at: number | string | null;
  secret_ciphertext: string | null;
  workspace_id: string;
  circuit_opens: number | string;
  /** The publish's span context (decision 47); null when it was not traced. */
  traceparent: string | null;
}

/**
 * A claim's token: the owner's name, and a part of its own for this claim, 20 hex digits. An
 * older release's had 16, which is how PostgreSQL tells its claims from ours during a rolling
 * upgrade (migration 000019's trigger, decision 58).
 */
export function newLease(owner: string): string {
  return `${owner}:${randomBytes(10).toString("hex")}`;
}

/**
 * Deliveries a claim may take now (SQLite's claim; PostgreSQL's function of migration 000023
 * says the same, kept in step): waiting (in `deliveries_due`: pending and not claimed,
 * decision 58), due, not of a destination or workspace that the
 * claimer excludes ($2, $3: JSON arrays of ids), not of a destination whose circuit is open.
 * The due index holds the destination, so excluded deliveries are passed over in the index.
 */
function claimableWhere(db: Database): string {
  return `dl.lease_owner IS NULL AND dl.next_attempt_at IS NOT NULL AND dl.next_attempt_at <= $1
       AND dl.destination_id NOT IN (${db.textsOfJsonArray("$2")})
       AND d.workspace_id NOT IN (${db.textsOfJsonArray("$3")})
       AND (d.circuit_open_until IS NULL OR d.circuit_open_until <= $1)`;
}

function exclusionValues(exclusions: ClaimExclusions): SqlValue[] {
  return [JSON.stringify(exclusions.destinations), JSON.stringify(exclusions.workspaces)];
}

interface CandidateRow extends Record<string, unknown> {
  seq: number | string;
  destination_id: string;
  workspace_id: string;
  circuit_opens: number | string;
}

/**
 * Claims due deliveries, oldest due first, within the claimer's room (decision 24): no more
 * of one destination than its room (one at a time while its circuit is half-open), nor of one
 * workspace. The claim reads a window of the oldest candidates and picks from it in order, so
 * that a destination with a backlog cannot fill a claim that others' deliveries are due for.
 *
 * The claim moves `next_attempt_at` to the end of the lease and sets `lease_owner`, which takes
 * the rows out of the due index, and writes the lease's row (`delivery_leases`, decision 58):
 * if the owner dies, the next claim after the lease's end makes them due again
 * (`reclaimRanOutLeases`; at-least-once delivery). Each claim has a token of its own
 * (`lease_owner`), so that only this claim can report on the rows, not an earlier claim by the
 * same worker whose lease ran out.
 */
export async function claimDueDeliveries(
  db: Database,
  owner: string,
  room: ClaimRoom,
  now: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  if (room.total <= 0) return [];
  if (db.dialect === "postgres") return claimInOneCall(db, owner, room, now, leaseMs);
  // Not durable: a claim lost in a crash is simply due again, as an abandoned one is.
  return db.transaction(
    async (tx) => {
      await reclaimRanOutLeases(db, tx, now);
      const candidates = await tx.query<CandidateRow>(candidatesSql(db), [
        now,
        ...exclusionValues(room.exclusions),
        claimWindow(room.total),
      ]);
      const picked = pickWithinRoom(candidates, room);
      if (picked.length === 0) return [];
      const lease = newLease(owner);
      await tx.execute(leaseSql(db), [now + leaseMs, lease, JSON.stringify(picked)]);
      await tx.execute(insertLeaseSql, [lease, now + leaseMs, JSON.stringify(picked)]);
      return selectClaimed(db, tx, picked, lease);
    },
    { durable: false, bounded: true },
  );
}

/**
 * PostgreSQL's claim: the same steps in one call of migration 000023's function, one round
 * trip (decision 66), whose plans keep off sequential scans by the function's own setting.
 */
async function claimInOneCall(
  db: Database,
  owner: string,
  room: ClaimRoom,
  now: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  const lease = newLease(owner);
  const rows = await db.query<ClaimedRow>(claimFunctionSql, [
    now,
    now + leaseMs,
    lease,
    ...exclusionValues(room.exclusions),
    claimWindow(room.total),
    room.total,
    room.perDestination,
    JSON.stringify(Object.fromEntries(room.destinationRoom)),
    room.perWorkspace,
    JSON.stringify(Object.fromEntries(room.workspaceRoom)),
  ]);
  return rows.map((row) => toClaimedDelivery(row, lease));
}

/**
 * The call of migration 000023's `svc_claim_deliveries`, its parameters typed. It writes, though
 * it begins with SELECT: the database's storage state does not count its success as a write's
 * (the worker waits for a write of its own while the disk is full).
 */
export const claimFunctionSql = `SELECT * FROM svc_claim_deliveries(
       CAST($1 AS BIGINT), CAST($2 AS BIGINT), CAST($3 AS TEXT), CAST($4 AS TEXT),
       CAST($5 AS TEXT), CAST($6 AS INTEGER), CAST($7 AS INTEGER), CAST($8 AS INTEGER),
       CAST($9 AS TEXT), CAST($10 AS INTEGER), CAST($11 AS TEXT))`;

/** SQLite: the oldest claimable deliveries, `$4` at most (`claimableWhere`). */
const candidatesSql = perDatabase(
  (db) => `SELECT dl.seq, dl.destination_id, d.workspace_id, d.circuit_opens
     FROM deliveries dl JOIN destinations d ON d.id = dl.destination_id
     WHERE ${claimableWhere(db)}
     ORDER BY dl.next_attempt_at LIMIT $4 ${db.claimLockClause("dl")}`,
);

/**
 * The claim's UPDATE: the rows of `$3` (a JSON array of `seq`s) leased to `$2` until `$1`.
 * Found by the primary key whatever the table's size and statistics (decision 56). SQLite's
 * claim runs it, then `insertLeaseSql` and `claimedSql`; PostgreSQL's claim is one call of a
 * function (`claimInOneCall`) that does the same.
 */
export const leaseSql = perDatabase(
  (db): string => `UPDATE deliveries SET next_attempt_at = $1, lease_owner = $2
     WHERE ${db.inJsonIntegers("seq", "$3")}`,
);

/** A claim's lease row: `$1` the lease, `$2` its end, `$3` a JSON array of its deliveries' seqs. */
export const insertLeaseSql =
  "INSERT INTO delivery_leases (lease, expires_at, seqs) VALUES ($1, $2, $3)";

/** How many leases that ran out one claim gives back before it claims (as migration 000023). */
const ranOutLeasesPerClaim = 64;

/**
 * Gives back the deliveries of leases that ran out by `now` (their process died, or left them
 * claimed): each still pending under its lease is waiting again, due at the lease's end, which
 * its `next_attempt_at` already says. The lease rows are deleted as they are read, skipped
 * where another claim holds them, so two claims never give back the same lease. Through `tx`,
 * inside a claim's transaction (decision 58). SQLite's claim; PostgreSQL's function does the
 * same (`claimInOneCall`).
 */
export async function reclaimRanOutLeases(
  db: Database,
  tx: SqlExecutor,
  now: number,
): Promise<void> {
  const ranOut = await tx.query<{ lease: string; seqs: string }>(ranOutLeasesSql(db), [now]);
  if (ranOut.length === 0) return;
  await tx.execute(givenBackSql(db), [leasedRows(ranOut)]);
}

/** The rows of leases that ran out by `$1`, deleted as they are read (`reclaimRanOutLeases`). */
const ranOutLeasesSql = perDatabase(
  (db) => `DELETE FROM delivery_leases WHERE lease IN
       (SELECT lease FROM delivery_leases WHERE expires_at <= $1
        ORDER BY expires_at LIMIT ${ranOutLeasesPerClaim} ${db.claimLockClause("delivery_leases")})
     RETURNING lease, seqs`,
);

/** The deliveries of `$1` (rows of `leasedColumns`) still pending under their lease, given back. */
const givenBackSql = perDatabase(
  (db) => `WITH r AS (${db.tableOfRows("$1", leasedColumns)})
     UPDATE deliveries SET lease_owner = NULL FROM r
     WHERE ${byPrimaryKeyOf(db, "deliveries")} deliveries.seq = r.seq
       AND deliveries.lease_owner = r.lease AND deliveries.status = 'pending'`,
);

/** The deliveries of lease rows, as rows of `leasedColumns`. */
function leasedRows(leases: readonly { lease: string; seqs: string }[]): TableParam {
  return new TableParam(
    leases.flatMap(({ lease, seqs }) =>
      (JSON.parse(seqs) as number[]).map((seq): SqlValue[] => [seq, lease]),
    ),
  );
}

const leasedColumns: readonly TableColumn[] = [
  ["seq", "BIGINT"],
  ["lease", "TEXT"],
];

/**
 * PostgreSQL: the condition that finds `table`'s rows joined to the CTE `r` by the primary key,
 * as an index condition on an array of `r`'s seqs (decision 53: the generic plan made without
 * statistics otherwise joined a whole index by hash); SQLite drives the join from `r` through
 * the key already. Ends with AND, or is empty.
 */
function byPrimaryKeyOf(db: Database, table: string): string {
  return db.dialect === "postgres" ? `${table}.seq = ANY (ARRAY(SELECT seq FROM r)) AND` : "";
}

/** Deletes the rows of leases whose every delivery was reported or given back (decision 58). */
export async function deleteLeases(
  db: Database,
  executor: SqlExecutor,
  leases: readonly string[],
): Promise<void> {
  if (leases.length === 0) return;
  await executor.execute(deleteLeasesSql(db), [JSON.stringify(leases)]);
}

const deleteLeasesSql = perDatabase(
  (db) => `DELETE FROM delivery_leases WHERE ${db.inJsonTexts("lease", "$1")}`,
);

/** How many of the oldest candidates a claim of `total` reads before it picks. */
function claimWindow(total: number): number {
  return Math.min(total * 2 + 32, 2048);
}

/**
 * The candidates a claim takes, in order: each while its destination and workspace have room.
 * SQLite's claim; PostgreSQL's function of migration 000023 picks the same in SQL, kept in step.
 */
function pickWithinRoom(candidates: readonly CandidateRow[], room: ClaimRoom): number[] {
  const destinationRoom = new Map(room.destinationRoom);
  const workspaceRoom = new Map(room.workspaceRoom);
  const picked: number[] = [];
  for (const row of candidates) {
    if (picked.length >= room.total) break;
    const left = destinationRoom.get(row.destination_id) ?? room.perDestination;
    const inDestination = Number(row.circuit_opens) > 0 ? Math.min(left, 1) : left;
    const inWorkspace = workspaceRoom.get(row.workspace_id) ?? room.perWorkspace;
    if (inDestination <= 0 || inWorkspace <= 0) continue;
    destinationRoom.set(row.destination_id, inDestination - 1);
    workspaceRoom.set(row.workspace_id, inWorkspace - 1);
    picked.push(Number(row.seq));
  }
  return picked;
}

/** Gives deliveries claimed under `lease` back, due at `dueAt`, as if never claimed. */
export async function releaseDeliveries(
  db: Database,
  lease: string,
  seqs: readonly number[],
  dueAt: number,
): Promise<void> {
  if (seqs.length === 0) return;
  await db.execute(
    `UPDATE deliveries SET lease_owner = NULL, next_attempt_at = $1
     WHERE lease_owner = $2 AND status = 'pending' AND ${db.inJsonIntegers("seq", "$3")}`,
    [dueAt, lease, JSON.stringify(seqs)],
  );
}

/**
 * What a worker needs to attempt the deliveries `seqs`, claimed under `lease`, by `seq`; read
 * through `tx`, in SQL of `db`'s engine.
 */
export async function selectClaimed(
  db: Database,
  tx: SqlExecutor,
  seqs: readonly number[],
  lease: string,
): Promise<ClaimedDelivery[]> {
  if (seqs.length === 0) return [];
  const rows = await tx.query<ClaimedRow>(claimedSql(db), [JSON.stringify(seqs)]);
  return rows.map((row) => toClaimedDelivery(row, lease));
}

/**
 * What a worker needs of the deliveries of `$1` (a JSON array of `seq`s), by `seq`, with their
 * events and destinations; found by the primary key whatever the table's size (decision 56).
 */
export const claimedSql = perDatabase(
  (db): string => `SELECT dl.seq, dl.event_id, dl.event_type, dl.attempts, dl.retry_base, e.body,
            e.traceparent, d.id AS destination_id, d.url, d.active, d.deleted_at, d.secret_ciphertext,
            d.workspace_id, d.circuit_opens
     FROM deliveries dl
     JOIN events e ON e.id = dl.event_id
     JOIN destinations d ON d.id = dl.destination_id
     WHERE ${db.inJsonIntegers("dl.seq", "$1")}
     ORDER BY dl.seq`,
);

export function toClaimedDelivery(row: ClaimedRow, lease: string): ClaimedDelivery {
  return {
    seq: Number(row.seq),
    lease,
    eventId: row.event_id,
    eventType: row.event_type,
    body: row.body,
    attempts: Number(row.attempts),
    retryBase: Number(row.retry_base),
    traceparent: row.traceparent ?? null,
    destination: {
      id: row.destination_id,
      url: row.url,
      active: toBoolean(row.active),
      deleted: row.deleted_at !== null,
      secretCiphertext: row.secret_ciphertext,
      workspaceId: row.workspace_id,
      circuitOpens: Number(row.circuit_opens),
    },
  };
}

/** A worker's report on one claimed delivery. */
export interface FinishedAttempt {
  readonly lease: string;
  readonly seq: number;
  readonly report: AttemptReport;
}

/** A round of reports, as `finishRound` passes it (exported for bench:table-params). */
export const resultColumns: readonly TableColumn[] = [
  ["seq", "BIGINT"],
  ["lease", "TEXT"],
  ["status", "TEXT"],
  ["next_attempt_at", "BIGINT"],
  ["last_error", "TEXT"],
  ["attempted", "INTEGER"],
  ["started_at", "BIGINT"],
  ["status_code", "INTEGER"],
  ["duration_ms", "INTEGER"],
  ["error_class", "TEXT"],
  ["response_body", "TEXT"],
  ["failure_reason", "TEXT"],
  ["webhook_signature", "TEXT"],
];

/**
 * The first attempt's record, kept in the delivery's row (decision 53): each column set from
 * the round's report when the attempt made is the delivery's first and ends it, else left as
 * it was. A first attempt that leads to a retry is a row of delivery_attempts, as the later
 * ones are: the row of a waiting delivery is rewritten by each claim, each result and each
 * opening of its circuit, and a response body in it would be written again every time.
 */
const keptInRow = "r.attempted = 1 AND deliveries.attempts = 0 AND r.status <> 'pending'";
const firstAttemptAssignments = (
  [
    ["first_started_at", "started_at"],
    ["first_duration_ms", "duration_ms"],
    ["first_status_code", "status_code"],
    ["first_error_class", "error_class"],
    ["first_error", "last_error"],
    ["first_response_body", "response_body"],
    ["first_webhook_signature", "webhook_signature"],
  ] as const
)
  .map(
    ([column, reported]) =>
      `${column} = CASE WHEN ${keptInRow} THEN r.${reported} ELSE deliveries.${column} END`,
  )
  .join(",\n       ");

/**
 * The attempts of a round not kept in their delivery's row, numbered (SQLite's second
 * statement): a first attempt that leads to a retry, and every later one.
 */
const attemptColumns: readonly TableColumn[] = [
  ["delivery_seq", "BIGINT"],
  ["attempt", "INTEGER"],
  ["started_at", "BIGINT"],
  ["duration_ms", "INTEGER"],
  ["status_code", "INTEGER"],
  ["error_class", "TEXT"],
  ["error", "TEXT"],
  ["response_body", "TEXT"],
  ["webhook_signature", "TEXT"],
];

/**
 * Records a batch of reports, durably. Only the claim that holds a delivery's lease may report
 * on it; returns, per report in order, whether it was recorded. A delivery reported twice in
 * one batch (by an expired claim and the current one) is recorded in rounds, so each report
 * meets the row as the previous one left it.
 *
 * A round is one UPDATE of every delivery from the round, passed as one JSON parameter, which
 * keeps a first attempt that ends its delivery in the delivery's row (decision 53), one INSERT
 * of the other attempts made, and one upsert of the hourly counters the delivery statistics
 * read (decision 36), a row per destination and hour of the round. On PostgreSQL the three
 * are one statement (the UPDATE a data-modifying CTE), and a batch of one round needs no
 * transaction: one round trip. SQLite, which cannot write in a CTE and has no round trips,
 * runs the three statements, in a transaction.
 */
export async function finishAttempts(
  db: Database,
  reports: readonly FinishedAttempt[],
  now: number,
  options: {
    /** Told of the deliveries that failed for good, in the same transaction (decision 48). */
    readonly onFailed?: (tx: SqlExecutor, seqs: readonly number[]) => Promise<void>;
    /** Leases whose every delivery is reported with this batch: their rows go with it. */
    readonly endedLeases?: readonly string[];
  } = {},
): Promise<boolean[]> {
  const { onFailed, endedLeases = [] } = options;
  const rounds = splitIntoRounds(reports);
  // Deliveries that end failed for good, which `onFailed` is told of in the same transaction
  // (decision 48); without it, or without such a report, not one statement more.
  const failing = new Set(
    onFailed === undefined
      ? []
      : reports.filter(
          ({ report: { result } }) => result.status === "failed" && endsForGood(result),
        ),
  );
  const record = async (executor: SqlExecutor): Promise<boolean[]> => {
    const recorded: boolean[] = reports.map(() => false);
    for (const [number, round] of rounds.entries()) {
      const changed = await finishRound(
        db,
        executor,
        round.map((index) => reports[index] as FinishedAttempt),
        now,
        number === 0 ? endedLeases : [],
      );
      for (const index of round)
        recorded[index] = changed.has((reports[index] as FinishedAttempt).seq);
    }
    const failed = reports.flatMap((finished, index) =>
      recorded[index] === true && failing.has(finished) ? [finished.seq] : [],
    );
    if (failed.length > 0) await onFailed?.(executor, [...new Set(failed)]);
    return recorded;
  };
  return db.writesInCtes && rounds.length === 1 && failing.size === 0
    ? record(db)
    : db.transaction(record, { bounded: true });
}

/**
 * A failure an operator is told of (`delivery.failed`): the retries were spent, or the
 * address is refused for good. Not a delivery a user deleted or paused the destination of,
 * nor one ended by an open circuit (its `destination.failing` tells of those).
 */
function endsForGood(result: { readonly reason: FailureReason }): boolean {
  return result.reason === "retries_exhausted" || result.reason === "destination_refused";
}

/** The reports' indexes in rounds, in order, where no delivery appears twice in a round. */
function splitIntoRounds(reports: readonly FinishedAttempt[]): number[][] {
  const rounds: number[][] = [];
  let remaining = reports.map((_, index) => index);
  while (remaining.length > 0) {
    const seen = new Set<number>();
    const round: number[] = [];
    const later: number[] = [];
    for (const index of remaining) {
      const { seq } = reports[index] as FinishedAttempt;
      (seen.has(seq) ? later : round).push(index);
      seen.add(seq);
    }
    rounds.push(round);
    remaining = later;
  }
  return rounds;
}

/**
 * The CTE `r` of a round's reports ($2, rows of `resultColumns`) and the UPDATE that records
 * them ($1 the time), in SQL of `db`'s engine; exported for the test of its plan.
 */
export const recordSql = perDatabase((db): { results: string; update: string } => {
  const results = `r AS (${db.tableOfRows("$2", resultColumns)})`;
  // An attempt that was made counts, and its time and status become the latest; a first
  // attempt that ends the delivery is kept in the row (decision 53), others in delivery_attempts.
  // A listen session's delivery keeps its due time in listen_due_at (decision 34).
  // The rows are found by the primary key (decision 53). On PostgreSQL, as an index condition
  // on an array of the round's seqs, and with `IS TRUE` keeping the status test from matching
  // the predicate of deliveries_due: the generic plan made without statistics read that whole
  // index and joined it by hash. SQLite drives the join from `r` through the key already, and
  // an IN of its own made it read `r` again for each row.
  const byKey = byPrimaryKeyOf(db, "deliveries");
  // A result that ends the delivery leaves its lease and its time as the claim set them, so
  // that it changes no indexed column and PostgreSQL can rewrite the row on its page (a HOT
  // update, decision 58); one that schedules a retry puts it back among the waiting.
  const update = `UPDATE deliveries SET status = r.status,
       next_attempt_at = CASE WHEN deliveries.listen_due_at IS NOT NULL THEN NULL
                              WHEN r.status = 'pending' THEN r.next_attempt_at
                              ELSE deliveries.next_attempt_at END,
       listen_due_at = CASE WHEN deliveries.listen_due_at IS NOT NULL THEN r.next_attempt_at END,
       lease_owner = CASE WHEN r.status = 'pending' THEN NULL ELSE deliveries.lease_owner END,
       last_error = r.last_error, failure_reason = r.failure_reason,
       updated_at = $1,
       attempts = deliveries.attempts + r.attempted,
       last_attempt_at = CASE WHEN r.attempted = 1 THEN r.started_at ELSE deliveries.last_attempt_at END,
       last_status_code = CASE WHEN r.attempted = 1 THEN r.status_code ELSE deliveries.last_status_code END,
       ${firstAttemptAssignments}
     FROM r
     WHERE ${byKey} deliveries.seq = r.seq AND deliveries.lease_owner = r.lease
       AND (deliveries.status = 'pending') IS TRUE`;
  return { results, update };
});

const insertAttempts = `INSERT INTO delivery_attempts
       (delivery_seq, attempt, started_at, duration_ms, status_code, error_class, error,
        response_body, webhook_signature)`;

/**
 * PostgreSQL: a round recorded in one statement, $3 the leases it ends. The ended leases' rows
 * are deleted (`l`) before any delivery is locked (`u` reads `l`): a claim's sweep takes a
 * lease's row, then its deliveries, and the two orders would deadlock on a late last report.
 */
const recordInOneStatementSql = perDatabase((db): string => {
  const { results, update } = recordSql(db);
  return `WITH ${results},
       l AS (DELETE FROM delivery_leases WHERE ${db.inJsonTexts("lease", "$3")} RETURNING 1),
       u AS (${update} AND (SELECT COUNT(*) FROM l) >= 0
             RETURNING deliveries.seq, deliveries.attempts, deliveries.status,
                       deliveries.workspace_id, deliveries.destination_id, r.attempted,
                       r.started_at, r.duration_ms,
                       r.status_code, r.error_class, r.last_error, r.response_body,
                       r.webhook_signature),
       a AS (${insertAttempts}
             SELECT seq, attempts, started_at, duration_ms, status_code, error_class,
                    last_error, response_body, webhook_signature
             FROM u WHERE attempted = 1 AND (attempts > 1 OR status = 'pending')),
       c AS (${countAttemptsSql(
         `SELECT workspace_id, destination_id, started_at, status_code FROM u WHERE attempted = 1`,
       )})
       SELECT seq FROM u`;
});

/** SQLite: a round's UPDATE, returning what the attempts' rows and the counters need. */
const recordReturningSql = perDatabase((db): string => {
  const { results, update } = recordSql(db);
  return `WITH ${results} ${update}
     RETURNING deliveries.seq, deliveries.attempts, deliveries.status, deliveries.workspace_id,
               deliveries.destination_id`;
});

const insertAttemptsSql = perDatabase(
  (db) => `${insertAttempts} SELECT * FROM (${db.tableOfRows("$1", attemptColumns)})`,
);

const addHourlyCountsInSql = perDatabase((db) =>
  addHourlyCountsSql(db.tableOfRows("$1", hourlyCountColumns)),
);

/**
 * One round, through `executor` in SQL of `db`'s engine: no delivery appears twice. Returns
 * the seqs whose report was recorded.
 */
async function finishRound(
  db: Database,
  executor: SqlExecutor,
  reports: readonly FinishedAttempt[],
  now: number,
  endedLeases: readonly string[],
): Promise<Set<number>> {
  const values = reports.map(({ lease, seq, report: { attempt, result, error } }): SqlValue[] => [
    seq,
    lease,
    result.status,
    result.status === "pending" ? result.nextAttemptAt.getTime() : null,
    error,
    attempt === null ? 0 : 1,
    attempt?.startedAt.getTime() ?? null,
    attempt?.statusCode ?? null,
    attempt === null ? null : Math.round(attempt.durationMs),
    attempt?.errorClass ?? null,
    attempt?.responseBody ?? null,
    result.status === "failed" ? result.reason : null,
    attempt?.webhookSignature ?? null,
  ]);
  if (db.writesInCtes) {
    const rows = await executor.query<{ seq: number | string }>(recordInOneStatementSql(db), [
      now,
      new TableParam(values),
      JSON.stringify(endedLeases),
    ]);
    return new Set(rows.map((row) => Number(row.seq)));
  }
  const rows = await executor.query<{
    seq: number | string;
    attempts: number | string;
    status: string;
    workspace_id: string | null;
    destination_id: string;
  }>(recordReturningSql(db), [now, new TableParam(values)]);
  await deleteLeases(db, executor, endedLeases);
  const recorded = new Map(rows.map((row) => [Number(row.seq), row]));
  const made = reports.filter(({ seq, report }) => report.attempt !== null && recorded.has(seq));
  if (made.length === 0) return new Set(recorded.keys());
  const asRows = made.filter(({ seq }) => {
    const row = recorded.get(seq);
    return Number(row?.attempts) > 1 || row?.status === "pending";
  });
  if (asRows.length > 0) {
    const attempts = asRows.map(({ seq, report }): SqlValue[] => {
      const attempt = report.attempt as AttemptRecord;
      return [
        seq,
        Number(recorded.get(seq)?.attempts ?? 0),
        attempt.startedAt.getTime(),
        Math.round(attempt.durationMs),
        attempt.statusCode,
        attempt.errorClass,
        report.error,
        attempt.responseBody ?? null,
        attempt.webhookSignature ?? null,
      ];
    });
    await executor.execute(insertAttemptsSql(db), [new TableParam(attempts)]);
  }
  const counted = hourlyCounts(
    made.map(({ seq, report }): CountedAttempt => {
      const row = recorded.get(seq) as (typeof rows)[number];
      const attempt = report.attempt as AttemptRecord;
      return {
        workspaceId: row.workspace_id,
        destinationId: row.destination_id,
        startedAt: attempt.startedAt.getTime(),
        statusCode: attempt.statusCode,
      };
    }),
  );
  await executor.execute(addHourlyCountsInSql(db), [new TableParam(counted)]);
  return new Set(recorded.keys());
}

/**
 * When a claim with `exclusions` may next find something: the earliest due delivery it could
 * take (from the due index, not a scan), the earliest end of an open circuit, or the earliest
 * end of a lease (whose deliveries, if any is still unreported, the claim gives back:
 * decision 58), whichever comes first. A delivery due before its destination's circuit closes
 * counts from then. A listen session's pending delivery has no \`next_attempt_at\` (decision
 * 34): never due here.
 */
export async function selectNextDueAt(
  db: Database,
  now: number,
  exclusions: ClaimExclusions = { destinations: [], workspaces: [] },
): Promise<Date | null> {
  const [row] = await db.query<Record<"due" | "reopens" | "lease_ends", number | string | null>>(
    nextDueSql(db),
    [...exclusionValues(exclusions), now],
  );
  const times = [row?.due, row?.reopens, row?.lease_ends]
    .filter((at) => at !== null && at !== undefined)
    .map(Number);
  return times.length === 0 ? null : new Date(Math.min(...times));
}

/**
 * The three times of `selectNextDueAt` in one statement (one round trip, decision 66), each
 * from its own index: the due delivery, the circuit that closes, the lease that ends.
 */
const nextDueSql = perDatabase(
  (db) => `SELECT
       (SELECT dl.next_attempt_at
        FROM deliveries dl JOIN destinations d ON d.id = dl.destination_id
        WHERE dl.lease_owner IS NULL AND dl.next_attempt_at IS NOT NULL
          AND dl.destination_id NOT IN (${db.textsOfJsonArray("$1")})
          AND d.workspace_id NOT IN (${db.textsOfJsonArray("$2")})
          AND (d.circuit_open_until IS NULL OR d.circuit_open_until <= dl.next_attempt_at)
        ORDER BY dl.next_attempt_at LIMIT 1) AS due,
       (SELECT circuit_open_until FROM destinations WHERE circuit_open_until > $3
        ORDER BY circuit_open_until LIMIT 1) AS reopens,
       (SELECT expires_at FROM delivery_leases ORDER BY expires_at LIMIT 1) AS lease_ends`,
);

/**
 * The most pending deliveries the backlog counts: reading 100,000 index entries takes SQLite
 * ~10 ms of the main thread; past that the gauge says "at least this many", which is all an
 * alert on a backlog needs (the lag gauge says how far behind the queue is).
 */
export const backlogCountLimit = 100_000;

/** The backlog's count in three parts (see `selectBacklog`); exported for the test of its plans. */
export function backlogCountSql(): string {
  return `SELECT
       (SELECT COUNT(*) FROM (SELECT 1 FROM deliveries
          WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL LIMIT ${backlogCountLimit}) w)
         AS waiting,
       (SELECT COUNT(*) FROM (SELECT 1 FROM deliveries
          WHERE listen_due_at IS NOT NULL LIMIT ${backlogCountLimit}) s) AS listen`;
}

/**
 * How many deliveries the claims hold: of each lease's (`$1`, rows of seq and lease), those
 * still pending under it, found by the primary key; exported for the test of its plan.
 */
export function heldCountSql(db: Database): string {
  return `WITH r AS (${db.tableOfRows("$1", leasedColumns)})
     SELECT COUNT(*) AS held FROM r JOIN deliveries dl ON dl.seq = r.seq
     WHERE ${byPrimaryKeyOf(db, "dl")} dl.lease_owner = r.lease AND dl.status = 'pending'`;
}

/**
 * The backlog for the metrics, from indexes and the leases, never the table (decision 58):
 * - the oldest due is the first entry of `deliveries_due` (next_attempt_at, destination_id,
 *   lease_owner) WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL, the deliveries
 *   waiting for a worker (held ones sit at their circuit's end): one probe. SQLite: `SEARCH
 *   deliveries USING COVERING INDEX deliveries_due (next_attempt_at<?)`; PostgreSQL: `Limit ->
 *   Index Only Scan using deliveries_due`.
 * - the count is of three parts: the waiting (that index), a listen session's (its own
 *   index, `deliveries_listen_due`), and those a worker's claim holds (each lease's
 *   deliveries still pending under it, found by the primary key). It grows with the backlog,
 *   not with the table, and stops at `backlogCountLimit` entries (decision 50): a backlog of
 *   millions (a long outage) would otherwise hold SQLite's main thread for a second at each
 *   scrape.
 */
export async function selectBacklog(
  db: Database,
  now: number,
): Promise<{ pending: number; oldestDueAt: Date | null }> {
  const [oldest] = await db.query<{ at: number | string }>(
    `SELECT next_attempt_at AS at FROM deliveries
     WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
     ORDER BY next_attempt_at LIMIT 1`,
    [now],
  );
  const [count] = await db.query<{ waiting: number | string; listen: number | string }>(
    backlogCountSql(),
  );
  const leases = await db.query<{ lease: string; seqs: string }>(
    "SELECT lease, seqs FROM delivery_leases",
  );
  const [held] =
    leases.length === 0
      ? []
      : await db.query<{ held: number | string }>(heldCountSql(db), [leasedRows(leases)]);
  const pending =
    Number(count?.waiting ?? 0) + Number(count?.listen ?? 0) + Number(held?.held ?? 0);
  return {
    pending: Math.min(pending, backlogCountLimit),
    oldestDueAt: oldest === undefined ? null : new Date(Number(oldest.at)),
  };
}

interface LastDeliveryRow extends Record<string, unknown> {
  status: DeliveryStatus;
  attempts: number | string;
  last_attempt_at: number | string | null;
  event_type: EventType;
  event_id: string;
  next_attempt_at: number | string | null;
  lease_owner: string | null;
  last_status_code: number | string | null;
  last_error: string | null;
  circuit_open_until: number | string | null;
  circuit_opens: number | string;
  circuit_error: string | null;
}

export const lastDeliverySql = `SELECT dl.status, dl.attempts, dl.last_attempt_at, dl.event_type,
            dl.event_id, dl.next_attempt_at, dl.lease_owner, dl.last_status_code, dl.last_error,
            d.circuit_open_until, d.circuit_opens, d.circuit_error
     FROM (SELECT * FROM deliveries WHERE destination_id = $1
           ORDER BY created_at DESC, seq DESC LIMIT 1) dl
     JOIN destinations d ON d.id = dl.destination_id
     WHERE d.workspace_id = $2`;

/**
 * The latest queued delivery to a destination of the workspace: in the order of
 * `deliveries_by_destination` (destination_id, created_at, seq), one probe at its end, taken
 * before the join (joined first, SQLite sorted what it found). Ordered by seq alone, the
 * database sorted every delivery of the destination: at 100,000 of them a get took tens of
 * ms, and at 500 requests/s its p99 grew to 43 s.
 */
export async function selectLastDelivery(
  db: SqlExecutor,
  workspaceId: string,
  destinationId: string,
  now: number,
): Promise<LastDelivery | null> {
  const rows = await db.query<LastDeliveryRow>(lastDeliverySql, [destinationId, workspaceId]);
  const row = rows[0];
  if (row === undefined) return null;
  return {
    status: row.status,
    attempts: Number(row.attempts),
    lastAttemptAt: toNullableDate(row.last_attempt_at),
    event: row.event_type,
    notificationId: row.event_id,
    // While claimed, next_attempt_at is the lease's end, not a scheduled attempt.
    nextAttemptAt:
      row.status === "pending" && row.lease_owner === null
        ? toNullableDate(row.next_attempt_at)
        : null,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: row.last_error,
    circuit: toCircuitState(row, now),
  };
}
