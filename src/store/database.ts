/**
 * The narrow seam between the store and a database engine: run a statement, run a
 * transaction. The store's SQL is written once, with `$1`-style placeholders, in the subset
 * both engines share; each engine adapts placeholders and values to its driver.
 */

export type SqlValue = string | number | bigint | boolean | null;
export type Row = Record<string, unknown>;

/** A column of a table passed as one parameter (`Database.tableOfRows`): its name and SQL type. */
export type TableColumn = readonly [name: string, type: "TEXT" | "BIGINT" | "INTEGER"];

/**
 * A table passed as one parameter, read by `Database.tableOfRows`: its rows, each an array of
 * cells in the order of the table's columns (cells past them are not read). PostgreSQL
 * receives it as a JSON text; SQLite binds its cells (decision 64). Its numbers are integers
 * where its columns say INTEGER or BIGINT.
 */
export class TableParam {
  readonly rows: readonly (readonly SqlValue[])[];

  constructor(rows: readonly (readonly SqlValue[])[]) {
    this.rows = rows;
  }
}

export type SqlParam = SqlValue | TableParam;

export interface SqlExecutor {
  /** Rows of a statement that returns rows (SELECT, or anything with RETURNING). */
  query<R extends Row = Row>(sql: string, params?: readonly SqlParam[]): Promise<R[]>;
  /** Runs a statement; returns the number of rows it changed. */
  execute(sql: string, params?: readonly SqlParam[]): Promise<number>;
}

export type Dialect = "sqlite" | "postgres";

export interface TransactionOptions {
  /**
   * False for a transaction whose own changes need not survive a crash, such as a claim (a
   * lost claim is simply due again). It is still answered only once everything it could have
   * read is durable. SQLite then skips waiting for its own fsync; PostgreSQL ignores it.
   */
  readonly durable?: boolean;
  /**
   * True for a transaction whose changes to existing pages are bounded by a batch's size,
   * never by a tenant's rows: a round of results, a claim, a publish whose workspaces may hold
   * few enough destinations. SQLite then keeps the copies of those pages, which it holds to
   * undo one statement or savepoint, in memory instead of spilling them to a temporary file
   * past 64 KiB (decision 62); PostgreSQL ignores it.
   */
  readonly bounded?: boolean;
  /**
   * True for a transaction whose plans must keep off sequential scans where an index serves:
   * PostgreSQL begins it with `SET LOCAL enable_seqscan = off`, sent with the BEGIN as one
   * message (one round trip, decision 66), so that any plan made inside it, a connection's
   * generic plan included, takes the index. For a listen session's claim and retention's
   * batches (a worker's claim on PostgreSQL is a function with the same setting of its own),
   * run thousands of times a minute on tables that start empty: a generic plan made while a
   * table was small would otherwise scan it whole for as long as the connection lives
   * (decision 56). SQLite ignores it.
   */
  readonly indexPlansOnly?: boolean;
}

export interface Database extends SqlExecutor {
  readonly dialect: Dialect;
  /**
   * Appended to the SELECT that picks rows of `table` (its name or alias in the SELECT) to
   * claim, so that concurrent claimers skip each other's rows: `FOR UPDATE OF table SKIP
   * LOCKED` on PostgreSQL (the rows of joined tables stay unlocked); empty on SQLite, where a
   * write transaction is exclusive anyway.
   */
  claimLockClause(table: string): string;
  /** Appended to a SELECT of a row about to be changed: `FOR UPDATE` on PostgreSQL. */
  readonly rowLockClause: string;
  /**
   * Whether a statement may write in its CTEs (PostgreSQL): then several writes are one
   * statement, one round trip, committed by itself. SQLite cannot; it has no round trips to
   * save either, so it runs the writes one by one in a transaction.
   */
  readonly writesInCtes: boolean;
  /**
   * A subquery giving the texts of the JSON array in parameter `placeholder`, one row each:
   * one statement for a list of any length (`IN (…)`), so its plan is made once.
   */
  textsOfJsonArray(placeholder: string): string;
  /**
   * A condition: `column` is one of the integers (row ids) of the JSON array in parameter
   * `placeholder`. On PostgreSQL `column = ANY (…)` over an array: a condition an index on
   * `column` serves, which the planner estimates at ten elements. `IN (subquery)` was
   * estimated at 100 rows, and a generic plan made while the table was small joined them by
   * hash to a scan of the table, a plan kept as the table grew (decision 56).
   */
  inJsonIntegers(column: string, placeholder: string): string;
  /**
   * A condition: `column` is one of the texts of the JSON array in parameter `placeholder`.
   * On PostgreSQL `column = ANY (ARRAY(…))`, which any plan, generic or not, takes through an
   * index on `column` (see `inJsonIntegers`); on SQLite `IN (…)`.
   */
  inJsonTexts(column: string, placeholder: string): string;
  /**
   * What gives a row's address in its table: PostgreSQL's `ctid`, SQLite's `rowid`. Selected
   * for `inRowAddresses`.
   */
  readonly rowAddress: string;
  /**
   * A condition: the row is at one of the addresses (`rowAddress`, or their texts) that
   * `subquery` gives. The row is read where it lies, with no descent of an index, whatever
   * the table's size: for deleting rows that the same statement or transaction has found and
   * locked (retention, decision 57). PostgreSQL's ctid moves when a row is updated, so only a
   * row the transaction holds (`FOR UPDATE`) keeps it; SQLite's rowid is the row's key. Not
   * for SQLite's WITHOUT ROWID tables.
   */
  inRowAddresses(subquery: string): string;
  /**
   * A subquery giving the table in parameter `placeholder`: a `TableParam`, or its rows as a
   * JSON text, each row an array of cells in the order of `columns`. A batch of any size is
   * then one parameter. PostgreSQL reads it as JSON, one statement text planned once
   * (graphile-worker's way); SQLite, which plans in-process, binds a `TableParam` of up to 64
   * rows as a VALUES list of parameters, prepared once per few sizes (decision 64).
   */
  tableOfRows(placeholder: string, columns: readonly TableColumn[]): string;
  /**
   * Called after a transaction that queued deliveries has committed, so that workers in other
   * processes wake: a `NOTIFY svc_deliveries` on PostgreSQL, coalesced (at most one in flight;
   * calls meanwhile are folded into one more). Not inside the publishing transaction: a
   * transaction that notifies takes a database-wide lock through its commit, which would
   * serialise every publish's commit. A no-op on SQLite, which has no such channel (workers
   * in other processes find the work by polling). Never throws; a lost notice is made up for
   * by the workers' idle poll.
   */
  announceDeliveriesQueued(): void;
  /**
   * Runs `work` in one transaction: all of it commits when `work` resolves, none of it when
   * it throws. Isolation differs by engine (SQLite runs transactions one at a time;
   * PostgreSQL runs them concurrently at READ COMMITTED), so SQL that must exclude a
   * concurrent writer says so itself: `rowLockClause`, `claimLockClause`, `ON CONFLICT`.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs a script of several statements (migrations). */
  executeScript(sql: string): Promise<void>;
  /**
   * Runs `work` (the migrations) while holding a lock that every process migrating the same
   * database takes, so that processes starting at once migrate one after another: an advisory
   * lock on PostgreSQL. SQLite just runs `work`: its write transactions already exclude each
   * other, and `migrate` checks each version inside its transaction.
   */
  withMigrationLock<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Since when writes have been failing with `storage_full` (the disk is full), or null: set
   * by such a failure, cleared by the next write that succeeds (decision 22).
   */
  storageFullSince(): Date | null;
  /**
   * Bytes free to the database's files, where the engine can tell (SQLite's directory); null
   * where it cannot (PostgreSQL's disk is the server's, an in-memory database has none).
   */
  freeSpace(): Promise<number | null>;
  close(): Promise<void>;
}

/**
 * `build`, made once for each database and kept (decision 59): for the statements of the hot
 * path, whose text a template puts together from the engine's pieces. A text built on each
 * call is a new string, which the statement caches (SQLite's prepared statements, PostgreSQL's
 * statement names, both keyed by text) must copy flat and hash again before they find it:
 * 1 to 6 µs a statement on the main thread, and garbage.
 */
export function perDatabase<T>(build: (db: Database) => T): (db: Database) => T {
  const made = new WeakMap<Database, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) {
      value = build(db);
      made.set(db, value);
    }
    return value;
  };
}
