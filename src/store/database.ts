/**
 * The narrow seam between the store and a database engine: run a statement, run a
 * transaction. The store's SQL is written once, with `$1`-style placeholders, in the subset
 * both engines share; each engine adapts placeholders and values to its driver.
 */

export type SqlValue = string | number | bigint | boolean | null;
export type Row = Record<string, unknown>;

export interface SqlExecutor {
  /** Rows of a statement that returns rows (SELECT, or anything with RETURNING). */
  query<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
  /** Runs a statement; returns the number of rows it changed. */
  execute(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

export type Dialect = "sqlite" | "postgres";

export interface Database extends SqlExecutor {
  readonly dialect: Dialect;
  /**
   * Appended to the SELECT that picks rows to claim, so that concurrent claimers skip each
   * other's rows: `FOR UPDATE SKIP LOCKED` on PostgreSQL; empty on SQLite, where a write
   * transaction is exclusive anyway.
   */
  readonly claimLockClause: string;
  /** Appended to a SELECT of a row about to be changed: `FOR UPDATE` on PostgreSQL. */
  readonly rowLockClause: string;
  /**
   * Runs `work` in one transaction that holds the write lock from its start, so that two
   * transactions never interleave their reads and writes. Commits when `work` resolves,
   * rolls back when it throws.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations). */
  executeScript(sql: string): Promise<void>;
  close(): Promise<void>;
}
