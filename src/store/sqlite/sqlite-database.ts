import { closeSync, constants, mkdirSync, openSync } from "node:fs";
import { open, statfs, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type {
  Database,
  Row,
  SqlExecutor,
  SqlParam,
  TableColumn,
  TransactionOptions,
} from "../database.ts";
import { StorageState } from "../storage-state.ts";
import { BackgroundCheckpointer, defaultWalSizeLimit } from "./checkpointer.ts";
import { asStorageFull } from "./storage-errors.ts";
import { sqliteValues, tableMarker, TableStatements } from "./table-params.ts";

/** SQLite numbers its parameters `?1`, `?2`…; the store writes `$1`, `$2`… as PostgreSQL does. */
export function toSqlitePlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, "?$1");
}

export interface SqliteOptions {
  /**
   * Who checkpoints the WAL: SQLite inside COMMITs (`automatic`, the default, for short-lived
   * commands) or a thread of this database's own (`background`, for the server; see
   * `BackgroundCheckpointer`).
   */
  readonly checkpoints?: "automatic" | "background";
  readonly onCheckpointError?: (error: Error) => void;
  /** With `background` checkpoints: the WAL's size past which it is truncated. Default 64 MiB. */
  readonly walSizeLimit?: number;
  /** Tests only: stands in for the fsync of the WAL, to watch who waits for it. */
  readonly syncWal?: () => Promise<void>;
}

/** Statements that cannot write, and need not wait for the disk. */
const readOnly = /^\s*SELECT\b/i;

/** A transaction waiting for its turn in a batch. */
interface QueuedTransaction {
  readonly work: (tx: SqlExecutor) => Promise<unknown>;
  /** False for a transaction whose own changes need not survive a crash (a claim). */
  readonly durable: boolean;
  /** True for a transaction whose writes a batch's size bounds (`TransactionOptions`). */
  readonly bounded: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The most transactions one COMMIT carries. */
const maxBatch = 256;

/**
 * node:sqlite is synchronous, so statements cannot interleave; a transaction, however,
 * spans awaits. While one is open every other caller waits for it, or its statements would
 * silently become part of that transaction.
 */
export class SqliteDatabase implements Database {
  readonly dialect = "sqlite";
  readonly rowLockClause = "";
  readonly writesInCtes = false;
  readonly #db: DatabaseSync;
  /** Prepared statements by text; a text with tables, its statements by their shape. */
  readonly #statements = new Map<string, StatementSync | TableStatements>();
  /** True while a transaction holds the connection; `#transactionDone` settles when it ends. */
  #inTransaction = false;
  /** Whether SQLite keeps its undo copies in memory now (`#keepUndoInMemory`). */
  #undoInMemory = false;
  #transactionDone: Promise<void> = Promise.resolve();
  readonly #queued: QueuedTransaction[] = [];
  #committing: Promise<void> | null = null;
  readonly #direct: SqlExecutor;
  /** The WAL file, which every commit appends to; null for an in-memory database. */
  readonly #walPath: string | null;
  #wal: Promise<FileHandle> | null = null;
  /** Commits so far (batches and writes outside them), and how many an fsync made durable. */
  #committed = 0;
  #synced = 0;
  /** The fsync under way (it makes commits up to `upTo` durable), and the one after it. */
  #syncing: { readonly upTo: number; readonly done: Promise<void> } | null = null;
  #nextSync: Promise<void> | null = null;
  #checkpointer: BackgroundCheckpointer | null = null;
  readonly #syncWal: (() => Promise<void>) | undefined;
  readonly #storage = new StorageState();

  constructor(path: string, options: SqliteOptions = {}) {
    // A database's directory, when new, is its owner's alone (the data directory has been
    // made and checked before, by `openDataDir`).
    if (path !== ":memory:") {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      // Created here, 0600, when new: SQLite would create it 0644 less the umask, and its -wal
      // and -shm files take the database file's mode. An existing file keeps its mode; the
      // server and the operator commands refuse one open to others (decision 27).
      closeSync(openSync(path, constants.O_CREAT | constants.O_WRONLY, 0o600));
    }
    this.#db = new DatabaseSync(path);
    // WAL lets readers run beside the writer (and beside operator commands in another
    // process). synchronous=NORMAL: SQLite syncs the WAL at checkpoints (so the file is never
    // corrupted) but not at each COMMIT; `#durableUpTo` makes each commit durable before anyone
    // is told it happened, by an fsync of the WAL off the event loop (decision 18).
    this.#walPath = path === ":memory:" ? null : `${path}-wal`;
    this.#syncWal = options.syncWal;
    this.#db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = NORMAL;
      PRAGMA foreign_keys = ON;
      PRAGMA busy_timeout = 5000;
    `);
    if (options.checkpoints === "background" && path !== ":memory:") {
      const walSizeLimit = options.walSizeLimit ?? defaultWalSizeLimit;
      // When SQLite starts the WAL over, it also cuts the file back to this size.
      this.#db.exec(`PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = ${walSizeLimit}`);
      this.#checkpointer = new BackgroundCheckpointer(path, walSizeLimit, (message) => {
        options.onCheckpointError?.(new Error(message));
      });
    }
    this.#direct = {
      query: (sql, params) => Promise.resolve(this.#all(sql, params)),
      execute: (sql, params) => Promise.resolve(this.#run(sql, params)),
    };
  }

  #prepare(sql: string): StatementSync {
    return this.#db.prepare(toSqlitePlaceholders(sql));
  }

  /** The statement of `sql` for `params`, prepared once, and the values to bind to it. */
  #bound(sql: string, params: readonly SqlParam[]): [StatementSync, SQLInputValue[]] {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = TableStatements.of(sql, (text) => this.#prepare(text)) ?? this.#prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement instanceof TableStatements
      ? statement.bind(params)
      : [statement, sqliteValues(params)];
  }

  #all<R extends Row>(sql: string, params: readonly SqlParam[] = []): R[] {
    try {
      const [statement, values] = this.#bound(sql, params);
      return statement.all(...values) as R[];
    } catch (error) {
      throw this.#failed(error);
    }
  }

  #run(sql: string, params: readonly SqlParam[] = []): number {
    try {
      const [statement, values] = this.#bound(sql, params);
      return Number(statement.run(...values).changes);
    } catch (error) {
      throw this.#failed(error);
    }
  }

  /** A disk-full error as `storage_full`, noted in the storage state (decision 22). */
  #failed(error: unknown): unknown {
    return this.#storage.failed(asStorageFull(error));
  }

  storageFullSince(): Date | null {
    return this.#storage.fullSince;
  }

  async freeSpace(): Promise<number | null> {
    if (this.#walPath === null) return null;
    const space = await statfs(dirname(this.#walPath));
    return space.bavail * space.bsize;
  }

  // Outside a transaction, a statement runs in the same synchronous step as the check that
  // none is open: an `await` between the two would let a batch BEGIN in the gap, and the
  // statement would silently join (and could be rolled back with) that batch.

  // A statement outside a transaction commits by itself. One that may have written is
  // answered only once it is durable (`#durableUpTo`), as a transaction's callers are.

  async query<R extends Row = Row>(sql: string, params?: readonly SqlParam[]): Promise<R[]> {
    if (readOnly.test(sql)) {
      while (this.#inTransaction) await this.#transactionDone;
      return this.#all<R>(sql, params);
    }
    const rows = await this.#writing(() => this.#all<R>(sql, params));
    this.#storage.wrote();
    await this.#durableUpTo(++this.#committed);
    return rows;
  }

  async execute(sql: string, params?: readonly SqlParam[]): Promise<number> {
    const changes = await this.#writing(() => this.#run(sql, params));
    if (changes === 0) return changes;
    this.#storage.wrote();
    await this.#durableUpTo(++this.#committed);
    return changes;
  }

  /** Runs a write outside a transaction, in the same synchronous step as the check. */
  async #writing<T>(write: () => T): Promise<T> {
    while (this.#inTransaction) await this.#transactionDone;
    return write();
  }

  /**
   * Group commit: transactions requested while one batch runs are queued and run next, one
   * after another inside a single BEGIN IMMEDIATE … COMMIT, each within its own savepoint
   * (unless it is alone). A transaction that fails is rolled back to its savepoint (or whole,
   * if alone) and fails alone; the others commit
   * together, so many concurrent changes share one fsync. Each caller's promise settles only
   * after the COMMIT that made its change durable (or failed).
   */
  transaction<T>(
    work: (tx: SqlExecutor) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({
        work,
        durable: options.durable ?? true,
        bounded: options.bounded ?? false,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      // The batch starts after this turn's I/O callbacks (setImmediate), so that every
      // request parsed in the same turn joins it: one fsync for all of them.
      this.#committing ??= new Promise<void>((start) => setImmediate(start)).then(() =>
        this.#commitQueued(),
      );
    });
  }

  async #commitQueued(): Promise<void> {
    while (this.#queued.length > 0) {
      await this.#commitBatch(this.#queued.splice(0, maxBatch));
    }
    this.#committing = null;
  }

  /**
   * Runs a batch and COMMITs it, then lets the next batch run while this one's commit is made
   * durable: its callers are answered only once an fsync of the WAL that began after the
   * COMMIT has finished. A transaction that need not be durable itself (a claim) still waits
   * until everything it could have read is durable: the commits before this one, and this
   * one's if a durable transaction ran before it in the batch. So nothing is ever acted on
   * (a notification sent) that a crash could take back.
   */
  async #commitBatch(batch: readonly QueuedTransaction[]): Promise<void> {
    let release!: () => void;
    this.#transactionDone = new Promise((resolve) => (release = resolve));
    this.#inTransaction = true;
    /** Each unit's answer, and whether it must wait for this COMMIT's own fsync. */
    const outcomes: {
      unit: QueuedTransaction;
      settle: () => void;
      needsThisCommit: boolean;
    }[] = [];
    let wrote = false;
    // A batch of one transaction runs it without a savepoint: there is nothing of another to
    // keep if it fails, and a savepoint has SQLite copy each page that the transaction changes
    // first (most batches are of one; decision 62). A batch of several gives each its own, and
    // holds the write lock from its BEGIN to its COMMIT whatever fails.
    const alone = batch.length === 1;
    let rolledBack = false;
    try {
      this.#keepUndoInMemory(batch.every((unit) => unit.bounded));
      // IMMEDIATE takes the write lock now, so that another process's writer makes us wait
      // here (busy_timeout) instead of failing half-way through.
      this.#db.exec("BEGIN IMMEDIATE");
      for (const unit of batch) {
        wrote ||= unit.durable;
        const needsThisCommit = wrote;
        if (!alone) this.#db.exec("SAVEPOINT unit");
        try {
          const result = await unit.work(this.#direct);
          if (!alone) this.#db.exec("RELEASE unit");
          outcomes.push({
            unit,
            settle: () => {
              unit.resolve(result);
            },
            needsThisCommit,
          });
        } catch (error) {
          // SQLite rolls the whole transaction back by itself on some errors (a full disk):
          // then there is no savepoint to return to, and the batch fails with this error.
          if (!this.#db.isTransaction) throw error;
          if (alone) {
            this.#db.exec("ROLLBACK");
            rolledBack = true;
          } else {
            this.#db.exec("ROLLBACK TO unit");
            this.#db.exec("RELEASE unit");
          }
          outcomes.push({
            unit,
            settle: () => {
              unit.reject(error);
            },
            needsThisCommit,
          });
        }
      }
      if (!rolledBack) this.#db.exec("COMMIT");
    } catch (error) {
      // BEGIN or COMMIT failed (the lock was not had, the disk is full): nothing is durable.
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      const failure = this.#failed(error);
      for (const unit of batch) unit.reject(failure);
      return;
    } finally {
      this.#inTransaction = false;
      release();
      try {
        this.#keepUndoInMemory(false);
      } catch {
        // It cannot fail between transactions without a TEMP database, which this connection
        // never opens; if it did, the setting stays and the next batch sets it again.
      }
    }
    if (rolledBack) {
      // Nothing was written: its caller is answered once what it could read is durable.
      for (const { unit, settle } of outcomes) {
        this.#durableUpTo(this.#committed).then(settle, (error: unknown) => {
          unit.reject(error);
        });
      }
      return;
    }
    this.#storage.wrote();
    const commit = ++this.#committed;
    for (const { unit, settle, needsThisCommit } of outcomes) {
      this.#durableUpTo(needsThisCommit ? commit : commit - 1).then(settle, (error: unknown) => {
        // The commit may not have reached the disk: its caller is not told it did.
        unit.reject(error);
      });
    }
  }

  /**
   * SQLite holds a copy of each page a statement or a savepoint changes, to undo it, and past
   * 64 KiB spills the copies to a temporary file (created, written, read and unlinked each
   * time), which a publish's or a round's savepoint and statements passed on most batches
   * (decision 62). For a batch of bounded transactions the copies stay in memory (`temp_store
   * = MEMORY`), and after it the setting is SQLite's again, for everything else: a workspace's
   * deletion, whose copies grow with its rows, and the sorts of reads run meanwhile.
   */
  #keepUndoInMemory(inMemory: boolean): void {
    if (this.#undoInMemory === inMemory) return;
    // Not a prepared statement: SQLite applies this PRAGMA when it compiles it.
    this.#db.exec(`PRAGMA temp_store = ${inMemory ? "MEMORY" : "DEFAULT"}`);
    this.#undoInMemory = inMemory;
  }

  /**
   * Resolves once the commits up to `upTo` are durable: at once if an fsync already covered
   * them, with the fsync under way if it began after them, else with the next one (group
   * commit for the disk: one fsync at a time, every commit made meanwhile shares the next).
   */
  #durableUpTo(upTo: number): Promise<void> {
    const walPath = this.#walPath;
    if (walPath === null || this.#synced >= upTo) return Promise.resolve();
    const syncing = this.#syncing;
    if (syncing === null) {
      const covers = this.#committed;
      const done = this.#fsync(walPath)
        .then(() => {
          this.#synced = Math.max(this.#synced, covers);
        })
        .finally(() => {
          this.#syncing = null;
        });
      this.#syncing = { upTo: covers, done };
      return done;
    }
    if (syncing.upTo >= upTo) return syncing.done;
    this.#nextSync ??= syncing.done
      .catch(() => undefined)
      .then(() => {
        this.#nextSync = null;
        return this.#durableUpTo(this.#committed);
      });
    return this.#nextSync;
  }

  async #fsync(walPath: string): Promise<void> {
    try {
      if (this.#syncWal !== undefined) {
        await this.#syncWal();
        return;
      }
      this.#wal ??= open(walPath, "r");
      await (await this.#wal).sync();
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async executeScript(sql: string): Promise<void> {
    await this.#writing(() => {
      try {
        this.#db.exec(sql);
      } catch (error) {
        throw this.#failed(error);
      }
    });
    this.#storage.wrote();
    await this.#durableUpTo(++this.#committed);
  }

  claimLockClause(): string {
    return "";
  }

  textsOfJsonArray(placeholder: string): string {
    return `SELECT value FROM json_each(${placeholder})`;
  }

  inJsonIntegers(column: string, placeholder: string): string {
    return this.inJsonTexts(column, placeholder);
  }

  inJsonTexts(column: string, placeholder: string): string {
    return `${column} IN (${this.textsOfJsonArray(placeholder)})`;
  }

  readonly rowAddress = "rowid";

  inRowAddresses(subquery: string): string {
    return `rowid IN (${subquery})`;
  }

  // Expanded when its statement is prepared, by what its parameter holds (decision 64).
  tableOfRows(placeholder: string, columns: readonly TableColumn[]): string {
    return tableMarker(placeholder, columns);
  }

  announceDeliveriesQueued(): void {
    // Nothing to announce to: workers in other processes poll.
  }

  withMigrationLock<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  async close(): Promise<void> {
    await this.#committing;
    while (this.#inTransaction) await this.#transactionDone;
    await this.#nextSync?.catch(() => undefined);
    await this.#syncing?.done.catch(() => undefined);
    this.#statements.clear();
    await this.#checkpointer?.stop();
    this.#db.close();
    await (await this.#wal?.catch(() => null))?.close();
  }
}
