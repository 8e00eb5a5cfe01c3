import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type { Database, Row, SqlExecutor, SqlValue } from "../database.ts";

/** SQLite numbers its parameters `?1`, `?2`…; the store writes `$1`, `$2`… as PostgreSQL does. */
function toSqlitePlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, "?$1");
}

function toSqliteValue(value: SqlValue): SQLInputValue {
  return typeof value === "boolean" ? Number(value) : value;
}

/**
 * node:sqlite is synchronous, so statements cannot interleave; a transaction, however,
 * spans awaits. While one is open every other caller waits for it, or its statements would
 * silently become part of that transaction.
 */
export class SqliteDatabase implements Database {
  readonly dialect = "sqlite";
  readonly claimLockClause = "";
  readonly rowLockClause = "";
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  /** True while a transaction holds the connection; `#transactionDone` settles when it ends. */
  #inTransaction = false;
  #transactionDone: Promise<void> = Promise.resolve();
  readonly #direct: SqlExecutor;

  constructor(path: string) {
    // The data directory holds the database and the encryption key: its owner's alone.
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#db = new DatabaseSync(path);
    // WAL lets readers run beside the writer (and beside operator commands in another
    // process); synchronous=FULL makes a commit durable before it is acknowledged.
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = FULL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
    `);
    this.#direct = {
      query: (sql, params) => Promise.resolve(this.#all(sql, params)),
      execute: (sql, params) => Promise.resolve(this.#run(sql, params)),
    };
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(toSqlitePlaceholders(sql));
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #all<R extends Row>(sql: string, params: readonly SqlValue[] = []): R[] {
    return this.#prepare(sql).all(...params.map(toSqliteValue)) as R[];
  }

  #run(sql: string, params: readonly SqlValue[] = []): number {
    return Number(this.#prepare(sql).run(...params.map(toSqliteValue)).changes);
  }

  async #outsideTransactions(): Promise<void> {
    while (this.#inTransaction) await this.#transactionDone;
  }

  async query<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R[]> {
    await this.#outsideTransactions();
    return this.#all<R>(sql, params);
  }

  async execute(sql: string, params?: readonly SqlValue[]): Promise<number> {
    await this.#outsideTransactions();
    return this.#run(sql, params);
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const previous = this.#transactionDone;
    let release!: () => void;
    this.#transactionDone = new Promise((resolve) => (release = resolve));
    await previous;
    this.#inTransaction = true;
    try {
      // IMMEDIATE takes the write lock now, so that another process's writer makes us wait
      // here (busy_timeout) instead of failing half-way through.
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        const result = await work(this.#direct);
        this.#db.exec("COMMIT");
        return result;
      } catch (error) {
        this.#db.exec("ROLLBACK");
        throw error;
      }
    } finally {
      this.#inTransaction = false;
      release();
    }
  }

  async executeScript(sql: string): Promise<void> {
    await this.#outsideTransactions();
    this.#db.exec(sql);
  }

  async close(): Promise<void> {
    await this.#outsideTransactions();
    this.#statements.clear();
    this.#db.close();
  }
}
