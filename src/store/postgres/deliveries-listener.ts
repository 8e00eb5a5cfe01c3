import type { FastifyBaseLogger } from "fastify";
import pg from "pg";
import type { WakeUpSource } from "../../delivery/wake-ups.ts";
import { connectionConfig } from "./connection-config.ts";
import { deliveriesChannel } from "./postgres-database.ts";

/** Reconnection waits: 100 ms, doubling, at most 5 s. */
const firstRetryMs = 100;
const longestRetryMs = 5000;

/**
 * Wake-ups through `LISTEN svc_deliveries` on a connection of its own (a pooled one would be
 * handed to other work). The store sends `NOTIFY` after each publish commits
 * (`announceDeliveriesQueued`), so every listening worker hears of new deliveries, whichever
 * process published them.
 *
 * A lost connection is reconnected with backoff. Notifications sent meanwhile are lost, so
 * every (re)connection wakes the worker once: it then claims whatever is due.
 */
export class PostgresWakeUps implements WakeUpSource {
  readonly #url: string;
  readonly #logger: FastifyBaseLogger;
  #wake: () => void = () => undefined;
  /** The connection being opened or listening; null while waiting to reconnect. */
  #client: pg.Client | null = null;
  #listening = false;
  #stopped = false;
  #failures = 0;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(url: string, logger: FastifyBaseLogger) {
    this.#url = url;
    this.#logger = logger;
  }

  get hearsOtherProcesses(): boolean {
    return this.#listening;
  }

  start(wake: () => void): void {
    this.#wake = wake;
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = null;
    this.#listening = false;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client(connectionConfig(this.#url));
    this.#client = client;
    client.on("error", (error) => {
      this.#lost(client, error);
    });
    client.on("end", () => {
      this.#lost(client, new Error("the server closed the connection"));
    });
    client.on("notification", () => {
      this.#wake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${deliveriesChannel}`);
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    if (this.#client !== client) return;
    this.#listening = true;
    if (this.#failures > 0) this.#logger.info("listening for queued deliveries again");
    this.#failures = 0;
    this.#wake();
  }

  /** Each connection is given up once, whichever of its events says so first. */
  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#listening = false;
    client.removeAllListeners("notification");
    void client.end().catch(() => undefined);
    if (this.#stopped) return;
    const delay = Math.min(firstRetryMs * 2 ** this.#failures, longestRetryMs);
    this.#failures += 1;
    this.#logger.warn(
      { err: error, retry_in_ms: delay },
      "lost the connection that listens for queued deliveries; reconnecting",
    );
    this.#retryTimer = setTimeout(() => void this.#connect(), delay);
  }
}
