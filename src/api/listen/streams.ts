import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";
import type { StreamedNotification } from "../../contract/listen.ts";
import { deliveryId } from "../../crypto/tokens.ts";
import { notificationHeaders } from "../../delivery/attempt.ts";
import type { SigningKeys } from "../../delivery/signing-keys.ts";
import type { ClaimedDelivery, Clock } from "../../interfaces.ts";
import type { Tracing } from "../../observability/tracing/tracing.ts";
import type { ListenSessions } from "../../store/listen-sessions.ts";

/** What the streams of a process share (decision 34). */
export interface ListenStreamSettings {
  readonly store: ListenSessions;
  readonly signingKeys: SigningKeys;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  /** A comment line this often keeps proxies and the CLI sure the stream is alive. */
  readonly heartbeatMs: number;
  /** How long a pushed delivery is the stream's before it is due again. */
  readonly leaseMs: number;
  /** Deliveries pushed and not yet reported, at most. */
  readonly inFlight: number;
  /** The longest a stream waits before it looks for due deliveries by itself. */
  readonly pollMs: number;
  /** A span per pushed notification, linked to its publish (decision 47); null when off. */
  readonly tracing?: Tracing | null;
}

/** How often a connected stream records that it is, for its session's expiry. */
const touchEveryMs = 60_000;

/** Why a stream ended, as its last event says. */
type Ending = "replaced" | "ended" | "shutdown";

/** One server-sent event, in the format's lines; `data` is JSON on one line. */
function serverSentEvent(event: string, data: unknown, id?: string): string {
  return `event: ${event}\n${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/**
 * One session's stream in this process: claims the session's due deliveries when woken (a
 * publish here, a `NOTIFY` from elsewhere, its poll, a retry coming due), signs each with the
 * session's secret and writes it as a `notification` event. It ends when the client goes, when
 * another stream takes the session, when the session ends, or when the server stops.
 */
export class ListenStream {
  readonly sessionId: string;
  readonly workspaceId: string;
  /** This stream's claim token: what the session records as its holder. */
  readonly token = `stream_${randomBytes(8).toString("hex")}`;
  readonly #settings: ListenStreamSettings;
  readonly #response: ServerResponse;
  readonly #onEnd: () => void;
  #running = false;
  #again = false;
  #ended = false;
  #heartbeat: NodeJS.Timeout | undefined;
  #touch: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(
    session: { id: string; workspaceId: string },
    response: ServerResponse,
    settings: ListenStreamSettings,
    onEnd: () => void,
  ) {
    this.sessionId = session.id;
    this.workspaceId = session.workspaceId;
    this.#response = response;
    this.#settings = settings;
    this.#onEnd = onEnd;
  }

  /** Starts it: the `ready` event, the heartbeat, and a first look for due deliveries. */
  start(): void {
    this.#write(
      serverSentEvent("ready", {
        session_id: this.sessionId,
        heartbeat_ms: this.#settings.heartbeatMs,
        lease_ms: this.#settings.leaseMs,
      }),
    );
    // A client that reads no more (suspended, stuck) is sent nothing more until it drains:
    // what it holds comes again to its next stream, never piled up in this process.
    this.#response.on("drain", () => {
      this.wake();
    });
    this.#heartbeat = setInterval(() => {
      this.#write(": heartbeat\n\n");
    }, this.#settings.heartbeatMs);
    this.#touch = setInterval(() => {
      this.#settings.store.touch(this.sessionId, this.token).catch((error: unknown) => {
        this.#settings.logger.warn({ err: error }, "could not record a listen stream's presence");
      });
    }, touchEveryMs);
    this.wake();
  }

  /** Looks for due deliveries now (coalesced: one look at a time, and one more after it). */
  wake(): void {
    if (this.#ended) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#pushDue().finally(() => {
      this.#running = false;
      if (this.#again && !this.#ended) {
        this.#again = false;
        this.wake();
      }
    });
  }

  /** Ends it with `ending` as its last event (none when the client went away). */
  end(ending: Ending | null): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#heartbeat);
    clearInterval(this.#touch);
    clearTimeout(this.#poll);
    if (ending !== null) this.#write(serverSentEvent(ending, { session_id: this.sessionId }));
    // The connection goes with the stream (it was the stream's alone): a socket left open
    // would hold the server's shutdown until its keep-alive ran out.
    const socket = this.#response.socket;
    this.#response.end(() => socket?.destroy());
    this.#onEnd();
    // Its claims stand: the CLI may still report them; a new stream takes them back at once.
    this.#settings.store.release(this.sessionId, this.token).catch((error: unknown) => {
      this.#settings.logger.warn({ err: error }, "could not release a listen session");
    });
  }

  async #pushDue(): Promise<void> {
    const { store, leaseMs, inFlight, logger } = this.#settings;
    try {
      for (;;) {
        if (this.#response.destroyed) {
          this.end(null);
          return;
        }
        if (this.#response.writableNeedDrain) return; // "drain" wakes it
        const claim = await store.claim(this.sessionId, this.token, { leaseMs, inFlight });
        if (this.#ended) return;
        if (claim.kind !== "claimed") {
          this.end(claim.kind);
          return;
        }
        for (const delivery of claim.deliveries) this.#push(delivery);
        if (claim.full) {
          // Room comes with a report (which wakes it here or reaches the session elsewhere)
          // or with a lease's end: looking sooner would find none.
          this.#schedule(this.#settings.pollMs);
          return;
        }
        if (claim.deliveries.length === 0) break;
      }
      await this.#pollLater();
    } catch (error) {
      logger.warn({ err: error }, "a listen stream could not claim its deliveries; it tries again");
      this.#schedule(this.#settings.pollMs);
    }
  }

  #push(delivery: ClaimedDelivery): void {
    const { signingKeys, clock, tracing } = this.#settings;
    const { destination } = delivery;
    if (destination.secretCiphertext === null) return;
    if (tracing) tracing.tracePush(delivery, this.sessionId);
    const key = signingKeys.keyFor(destination.id, destination.secretCiphertext);
    const id = deliveryId(delivery.eventId, destination.id);
    const notification: StreamedNotification = {
      delivery_id: id,
      event_id: delivery.eventId,
      event_type: delivery.eventType,
      attempt: delivery.attempts + 1,
      claim: delivery.lease,
      headers: notificationHeaders(key, delivery, clock.now()),
      body: delivery.body,
    };
    this.#write(serverSentEvent("notification", notification, id));
  }

  /** The next look: when the next delivery is due, at most `pollMs` from now. */
  async #pollLater(): Promise<void> {
    const next = await this.#settings.store.nextDueAt(this.sessionId);
    const untilDue =
      next === null ? Infinity : next.getTime() - this.#settings.clock.now().getTime();
    this.#schedule(Math.max(10, Math.min(untilDue, this.#settings.pollMs)));
  }

  #schedule(delayMs: number): void {
    if (this.#ended) return;
    clearTimeout(this.#poll);
    this.#poll = setTimeout(() => {
      this.wake();
    }, delayMs);
  }

  #write(text: string): void {
    const response = this.#response;
    if (response.writableEnded || response.destroyed) return;
    if (!this.#ended || text.startsWith("event: ")) response.write(text);
  }
}

/**
 * The listen streams of this process: woken when this process queues deliveries, or when any
 * process does (PostgreSQL's `NOTIFY`, through the server's wake-ups); ended when the server
 * stops, so that their clients reconnect elsewhere.
 */
export class ListenStreams {
  readonly #streams = new Set<ListenStream>();
  #closed = false;

  /** Keeps `stream`; false once the server stops (the stream is then ended at once). */
  add(stream: ListenStream): boolean {
    if (this.#closed) {
      stream.end("shutdown");
      return false;
    }
    this.#streams.add(stream);
    return true;
  }

  remove(stream: ListenStream): void {
    this.#streams.delete(stream);
  }

  /** Deliveries may have been queued: every stream looks. */
  wakeAll(): void {
    for (const stream of this.#streams) stream.wake();
  }

  /** Something changed for the session of `id`: its stream, if here, looks. */
  wakeSession(id: string): void {
    for (const stream of this.#streams) if (stream.sessionId === id) stream.wake();
  }

  /** The session of `id` was ended here: its stream, if here, ends at once. */
  endSession(id: string): void {
    for (const stream of this.#streams) if (stream.sessionId === id) stream.end("ended");
  }

  get size(): number {
    return this.#streams.size;
  }

  /** The server stops: every stream ends with `shutdown`. */
  closeAll(): void {
    this.#closed = true;
    for (const stream of [...this.#streams]) stream.end("shutdown");
  }
}
