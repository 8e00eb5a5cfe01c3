import pg from "pg";
import {
  TableParam,
  type Database,
  type Row,
  type SqlExecutor,
  type SqlParam,
  type SqlValue,
  type TableColumn,
  type TransactionOptions,
} from "../database.ts";
import { connectionConfig } from "./connection-config.ts";
import { StorageState } from "../storage-state.ts";
import { asUnavailable, idleConnectionError } from "./connection-errors.ts";

/** The channel that `NOTIFY` wakes delivery workers on when deliveries are queued. */
export const deliveriesChannel = "svc_deliveries";

/**
 * The key of the advisory lock that migrations run under (any constant; this one spells
 * "svcm"), so that several processes starting at once migrate one after another.
 */
const migrationLockKey = 0x7376636d;

export interface PostgresOptions {
  /** Connections in the pool. Default 10. */
  readonly poolSize?: number;
  /** Told about errors of idle connections, which the pool has already dropped. */
  readonly onIdleError?: (error: Error) => void;
  /** Told when a NOTIFY that wakes workers fails; they find the work at their next poll. */
  readonly onNoticeError?: (error: Error) => void;
}

/**
 * PostgreSQL through a `pg` connection pool. Every statement outside a transaction takes any
 * free connection; a transaction holds one connection from BEGIN to COMMIT or ROLLBACK.
 * Errors that mean the database cannot be reached become `service_unavailable`, and a full
 * disk `storage_full`, in one place (`asUnavailable`), so the API answers 503 and the worker's
 * loop backs off and tries again.
 */
export class PostgresDatabase implements Database {
  readonly dialect = "postgres";
  readonly rowLockClause = "FOR UPDATE";
  readonly writesInCtes = true;
  readonly #pool: pg.Pool;
  readonly #onNoticeError: (error: Error) => void;
  /** Whether a NOTIFY is on its way, and whether another was asked for meanwhile. */
  #notifying = false;
  #noticeWanted = false;
  readonly #storage = new StorageState();

  constructor(url: string, options: PostgresOptions = {}) {
    this.#pool = new pg.Pool({ ...connectionConfig(url), max: options.poolSize ?? 10 });
    // An idle connection that the server closes (restart, pg_terminate_backend) is removed by
    // the pool, which then emits 'error': without a listener that would crash the process.
    // The pool hangs the whole client on the error (`error.client`, kilobytes when logged):
    // the listener gets the error's message and code alone.
    this.#pool.on("error", (error) => {
      options.onIdleError?.(idleConnectionError(error));
    });
    this.#onNoticeError = options.onNoticeError ?? (() => undefined);
  }

  claimLockClause(table: string): string {
    return `FOR UPDATE OF ${table} SKIP LOCKED`;
  }

  textsOfJsonArray(placeholder: string): string {
    return `SELECT jsonb_array_elements_text(CAST(${placeholder} AS JSONB))`;
  }

  inJsonIntegers(column: string, placeholder: string): string {
    // A JSON array of integers, `[1,2]`, is the array literal `{1,2}` with other brackets.
    return `${column} = ANY (CAST(translate(${placeholder}, '[]', '{}') AS BIGINT[]))`;
  }

  inJsonTexts(column: string, placeholder: string): string {
    return `${column} = ANY (ARRAY(${this.textsOfJsonArray(placeholder)}))`;
  }

  readonly rowAddress = "ctid";

  // An array computed once (an InitPlan), which PostgreSQL reads by a TID scan: each row
  // fetched from its page, no index descended.
  inRowAddresses(subquery: string): string {
    return `ctid = ANY (ARRAY(SELECT CAST(a AS TID) FROM (${subquery}) AS addresses (a)))`;
  }

  tableOfRows(placeholder: string, columns: readonly TableColumn[]): string {
    const cells = columns.map(
      ([name, type], index) => `CAST(r ->> ${index} AS ${type}) AS ${name}`,
    );
    return `SELECT ${cells.join(", ")} FROM jsonb_array_elements(CAST(${placeholder} AS JSONB)) AS j(r)`;
  }

  announceDeliveriesQueued(): void {
    if (this.#notifying) {
      this.#noticeWanted = true;
      return;
    }
    this.#notifying = true;
    this.#noticeWanted = false;
    this.#pool
      .query(`NOTIFY ${deliveriesChannel}`)
      .catch((error: unknown) => {
        this.#onNoticeError(toError(error));
      })
      .finally(() => {
        this.#notifying = false;
        // Deliveries committed while that NOTIFY was on its way need one of their own: the
        // workers may have claimed before those commits.
        if (this.#noticeWanted) this.announceDeliveriesQueued();
      });
  }

  async query<R extends Row = Row>(sql: string, params: readonly SqlParam[] = []): Promise<R[]> {
    let rows: R[];
    try {
      rows = (await this.#pool.query<R>(prepared(sql, params))).rows;
    } catch (error) {
      throw this.#failed(error);
    }
    if (!readOnly.test(sql)) this.#storage.wrote();
    return rows;
  }

  async execute(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    let changed: number;
    try {
      changed = (await this.#pool.query(prepared(sql, params))).rowCount ?? 0;
    } catch (error) {
      throw this.#failed(error);
    }
    this.#storage.wrote();
    return changed;
  }

  storageFullSince(): Date | null {
    return this.#storage.fullSince;
  }

  freeSpace(): Promise<number | null> {
    // The disk is the server's: only a write can tell.
    return Promise.resolve(null);
  }

  /** The error as the catalog's, a full disk noted in the storage state (decision 22). */
  #failed(error: unknown): unknown {
    return this.#storage.failed(asUnavailable(error));
  }

  /**
   * READ COMMITTED, PostgreSQL's default: the store's statements take the row locks they need
   * (`FOR UPDATE`, `SKIP LOCKED`, `ON CONFLICT`), which is what lets claimers run side by side.
   */
  async transaction<T>(
    work: (tx: SqlExecutor) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    return this.#withClient(async (client) => {
      // Without parameters the driver sends the simple protocol, which takes both statements
      // in one message: one round trip, not two.
      await client.query(options.indexPlansOnly === true ? beginIndexPlansOnly : "BEGIN");
      try {
        const result = await work(clientExecutor(client));
        await client.query("COMMIT");
        this.#storage.wrote();
        return result;
      } catch (error) {
        // On a broken connection the rollback fails too; the server rolls back by itself.
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  async executeScript(sql: string): Promise<void> {
    await this.execute(sql);
  }

  /**
   * `pg_advisory_lock` on a connection of its own, held while `work` runs: other processes
   * wait here until the migrations are done, then find nothing left to apply. The lock goes
   * with the connection, so a process that dies while migrating releases it.
   */
  async withMigrationLock<T>(work: () => Promise<T>): Promise<T> {
    return this.#withClient(async (client) => {
      await client.query("SELECT pg_advisory_lock($1)", [migrationLockKey]);
      try {
        return await work();
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [migrationLockKey]);
      }
    });
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  /**
   * A connection of the pool for `use`. A connection that failed is destroyed, not returned:
   * it may be broken, or still inside a transaction.
   */
  async #withClient<T>(use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    // A checked-out connection that the server closes between two statements emits 'error';
    // the next statement fails with it, so this listener only keeps it from crashing us.
    const ignore = (): void => undefined;
    let client: pg.PoolClient;
    try {
      client = await new Promise<pg.PoolClient>((resolve, reject) => {
        // The callback form, not the promise: the listener must be on before the driver reads
        // on. A new connection's first bytes can carry both "ready" and the server's notice
        // that it was terminated; the pool removes its own listener as it hands over, and a
        // promise would resume us only after that notice found no listener (an uncaught
        // 'error' that ends the process).
        this.#pool.connect((error, connected) => {
          if (connected === undefined) {
            reject(error ?? new Error("the pool gave no connection"));
            return;
          }
          connected.on("error", ignore);
          resolve(connected);
        });
      });
    } catch (error) {
      throw this.#failed(error);
    }
    let failure: unknown;
    try {
      return await use(client);
    } catch (error) {
      failure = error;
      throw this.#failed(error);
    } finally {
      client.off("error", ignore);
      client.release(failure === undefined ? undefined : toError(failure));
    }
  }
}

/** A transaction's BEGIN that keeps its plans on indexes (`TransactionOptions.indexPlansOnly`). */
const beginIndexPlansOnly = "BEGIN; SET LOCAL enable_seqscan = off";

/** Statements that cannot write: their success says nothing about the disk. */
const readOnly = /^\s*SELECT\b/i;

/** Statement names by SQL text: the same text always gets the same name. */
const statementNames = new Map<string, string>();
/** Texts beyond this many run unnamed (parsed each time) rather than grow every connection. */
const maxNamedStatements = 2000;

/**
 * A statement with parameters runs as a named prepared statement: each connection parses and
 * plans it once, then only binds and executes (the driver keeps the names per connection).
 * The store's SQL is a fixed set of texts (a batch is one JSON parameter), so the names stay
 * few. Statements without parameters (BEGIN, COMMIT, NOTIFY) gain nothing from it.
 */
function prepared(sql: string, params: readonly SqlParam[]): pg.QueryConfig<SqlValue[]> {
  if (params.length === 0) return { text: sql };
  // A table goes as the JSON text `tableOfRows` reads (decision 64).
  const values = params.map((param) =>
    param instanceof TableParam ? JSON.stringify(param.rows) : param,
  );
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < maxNamedStatements) {
    name = `svc_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  return name === undefined ? { text: sql, values } : { name, text: sql, values };
}

function clientExecutor(client: pg.PoolClient): SqlExecutor {
  return {
    query: async <R extends Row = Row>(sql: string, params: readonly SqlParam[] = []) =>
      (await client.query<R>(prepared(sql, params))).rows,
    execute: async (sql, params = []) => (await client.query(prepared(sql, params))).rowCount ?? 0,
  };
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
