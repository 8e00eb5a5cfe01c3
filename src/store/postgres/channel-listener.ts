import type { FastifyBaseLogger } from "fastify";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { WakeUpSource } from "../../delivery/wake-ups.ts";
import type { ChangeFeed } from "../api-key-cache.ts";
import { connectionConfig } from "./connection-config.ts";
import { deliveriesChannel } from "./postgres-database.ts";

/** Reconnection waits: 100 ms, doubling, at most 5 s. */
const firstRetryMs = 100;
const longestRetryMs = 5000;
/**
 * How often a listening connection is asked whether it is still there, and how long its
 * answer may take. An idle connection that a NAT or firewall dropped without a word would
 * otherwise pass for listening until the kernel's keepalive gave up on it (hours).
 */
export const listenerCheckMs = 5000;
/** How long `stop` waits for the server to confirm the connection's end. */
const endWaitMs = 1000;

/** The channel that the trigger of migration 000022 notifies after a change to `api_keys`. */
export const apiKeysChannel = "svc_api_keys";

/**
 * `LISTEN` on one channel, on a connection of its own (a pooled one would be handed to other
 * work), told to a `ChangeFeed`'s handlers: `changed` for each notification, `hearing` as the
 * connection starts and stops listening. A lost connection is reconnected with backoff;
 * notifications sent meanwhile are lost, which `hearing(false)` and then `hearing(true)` say.
 */
export class PostgresChannelListener implements ChangeFeed {
  readonly #url: string;
  readonly #channel: string;
  /** What the channel tells of, for the log: "queued deliveries". */
  readonly #subject: string;
  readonly #logger: FastifyBaseLogger;
  #handlers: { changed(): void; hearing(on: boolean): void } = {
    changed: () => undefined,
    hearing: () => undefined,
  };
  /** The connection being opened or listening; null while waiting to reconnect. */
  #client: pg.Client | null = null;
  #listening = false;
  #stopped = false;
  #failures = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #checkTimer: NodeJS.Timeout | undefined;
  readonly #checkMs: number;

  constructor(
    url: string,
    channel: string,
    subject: string,
    logger: FastifyBaseLogger,
    options: { checkMs?: number } = {},
  ) {
    this.#checkMs = options.checkMs ?? listenerCheckMs;
    this.#url = url;
    this.#channel = channel;
    this.#subject = subject;
    this.#logger = logger;
  }

  get listening(): boolean {
    return this.#listening;
  }

  start(handlers: { changed(): void; hearing(on: boolean): void }): void {
    this.#handlers = handlers;
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#checkTimer);
    const client = this.#client;
    this.#client = null;
    this.#setListening(false);
    // A connection that stopped answering would never confirm its end: a second at most.
    await Promise.race([
      client?.end().catch(() => undefined),
      sleep(endWaitMs, undefined, { ref: false }),
    ]);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    // Named for its channel, so that pg_stat_activity tells the listeners apart.
    const client = new pg.Client({
      ...connectionConfig(this.#url),
      application_name: `svc listen ${this.#channel}`,
    });
    this.#client = client;
    client.on("error", (error) => {
      this.#lost(client, error);
    });
    client.on("end", () => {
      this.#lost(client, new Error("the server closed the connection"));
    });
    client.on("notification", () => {
      this.#handlers.changed();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    if (this.#client !== client) return;
    if (this.#failures > 0) this.#logger.info(`listening for ${this.#subject} again`);
    this.#failures = 0;
    this.#setListening(true);
    let checking = false;
    this.#checkTimer = setInterval(() => {
      if (checking) return;
      checking = true;
      const late = setTimeout(() => {
        this.#lost(client, new Error(`no answer to a check in ${this.#checkMs} ms`));
      }, this.#checkMs).unref();
      client.query("SELECT 1").then(
        () => {
          clearTimeout(late);
          checking = false;
        },
        (error: unknown) => {
          clearTimeout(late);
          this.#lost(client, error);
        },
      );
    }, this.#checkMs);
    this.#checkTimer.unref();
  }

  #setListening(on: boolean): void {
    if (this.#listening === on) return;
    this.#listening = on;
    this.#handlers.hearing(on);
  }

  /** Each connection is given up once, whichever of its events says so first. */
  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client) return;
    this.#client = null;
    clearInterval(this.#checkTimer);
    this.#setListening(false);
    client.removeAllListeners("notification");
    void client.end().catch(() => undefined);
    if (this.#stopped) return;
    const delay = Math.min(firstRetryMs * 2 ** this.#failures, longestRetryMs);
    this.#failures += 1;
    this.#logger.warn(
      { err: error, retry_in_ms: delay },
      `lost the connection that listens for ${this.#subject}; reconnecting`,
    );
    this.#retryTimer = setTimeout(() => void this.#connect(), delay);
  }
}

/**
 * Wake-ups through `LISTEN svc_deliveries`. The store sends `NOTIFY` after each publish
 * commits (`announceDeliveriesQueued`), so every listening worker hears of new deliveries,
 * whichever process published them. Every (re)connection wakes the worker once, for the
 * notifications it may have missed: it then claims whatever is due.
 */
export class PostgresWakeUps implements WakeUpSource {
  readonly #listener: PostgresChannelListener;

  /** `subject` names, in the log, what the wake-ups are for: "queued deliveries" by default. */
  constructor(url: string, logger: FastifyBaseLogger, subject = "queued deliveries") {
    this.#listener = new PostgresChannelListener(url, deliveriesChannel, subject, logger);
  }

  get hearsOtherProcesses(): boolean {
    return this.#listener.listening;
  }

  start(wake: () => void): void {
    this.#listener.start({
      changed: wake,
      hearing: (on) => {
        if (on) wake();
      },
    });
  }

  stop(): Promise<void> {
    return this.#listener.stop();
  }
}
