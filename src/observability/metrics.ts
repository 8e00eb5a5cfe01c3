import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Clock } from "../interfaces.ts";
import type { QueueBacklog } from "../store/delivery-queue.ts";
import {
  ATTEMPT_OUTCOMES,
  type AttemptFinished,
  type AttemptOutcome,
  type DeliveryListener,
} from "./delivery-events.ts";

/** How long a reading of the queue's backlog serves scrapes, so that they never pile up on it. */
const backlogReadEveryMs = 5000;

/** From 5 ms to the longest delivery timeout worth waiting for. */
const attemptDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Removes the runtime's gauges named like counters (prom-client's
 * `nodejs_active_{handles,requests,resources}_total`), which the exposition format's linter
 * (`promtool check metrics`) refuses: each is the sum of a gauge kept beside it, by type
 * (`svc_nodejs_active_handles` and so on), so nothing is lost.
 */
function withoutMisnamedGauges(registry: Registry): void {
  for (const metric of registry.getMetricsAsArray()) {
    if (!(metric instanceof Counter) && metric.name.endsWith("_total")) {
      registry.removeSingleMetric(metric.name);
    }
  }
}

/** What the metrics read of the world, besides what they are told. */
export interface MetricsSources {
  /** The pending deliveries and the oldest due one, read at scrape time. */
  readonly backlog: () => Promise<QueueBacklog>;
  readonly clock: Clock;
  /** A failed backlog reading; the scrape goes on with the last values read. */
  readonly onBacklogError: (error: unknown) => void;
}

/**
 * The process's metrics (decision 31), in a registry of its own (never prom-client's global
 * one), every name prefixed `svc_`: docs/metrics.md lists them. Labels are fixed words only
 * (an outcome, a route's template, a status), never an id, a URL or a tenant's text.
 *
 * The worker's attempts arrive through `DeliveryEvents` (this is a `DeliveryListener`); the
 * API reports publishes and answered requests; the backlog is read from the store when
 * scraped, at most once per `backlogReadEveryMs`.
 */
export class ServiceMetrics implements DeliveryListener {
  readonly registry = new Registry();
  // The counts of the hot path are plain numbers, handed to their series when scraped
  // (`collect`): a prom-client series' `inc` builds and checks its labels' key on each call,
  // about 1.5 µs of the main thread per delivery (decision 59).
  readonly #counts: {
    published: number;
    readonly attempts: Record<AttemptOutcome, number>;
    inFlight: number;
    /** Answered requests by method, route and status: a bounded set (routes are templates). */
    readonly requests: Map<
      string,
      { readonly labels: Record<"method" | "route" | "status", string>; count: number }
    >;
  } = {
    published: 0,
    attempts: { delivered: 0, retry: 0, failed: 0 },
    inFlight: 0,
    requests: new Map(),
  };
  readonly #attemptSeconds: Histogram;
  readonly #sources: MetricsSources;
  #backlog: { readAt: number; reading: Promise<QueueBacklog> } | null = null;
  #lastBacklog: QueueBacklog = { pending: 0, oldestDueAt: null };

  constructor(sources: MetricsSources) {
    this.#sources = sources;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "svc_" });
    withoutMisnamedGauges(this.registry);
    // Each series is set from this process's own count when scraped: reset, then the totals.
    const counts = this.#counts;
    new Counter({
      name: "svc_events_published_total",
      help: "Events accepted by POST /v1/workspaces/:workspace/events (committed with their deliveries).",
      registers,
      collect() {
        this.reset();
        this.inc(counts.published);
      },
    });
    // Every outcome is exposed from the start, at 0, so that rates exist before the first one.
    new Counter({
      name: "svc_delivery_attempts_total",
      help: "Delivery attempts made, by outcome: delivered, retry (a retry is scheduled), failed (no retry left, or never retried).",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const outcome of ATTEMPT_OUTCOMES) this.inc({ outcome }, counts.attempts[outcome]);
      },
    });
    this.#attemptSeconds = new Histogram({
      name: "svc_delivery_attempt_duration_seconds",
      help: "How long an attempt's exchange took: address check, connection, request and answer.",
      buckets: attemptDurationBuckets,
      registers,
    });
    new Gauge({
      name: "svc_delivery_attempts_in_flight",
      help: "Attempts this process has started and not yet finished.",
      registers,
      collect() {
        this.set(counts.inFlight);
      },
    });
    new Counter({
      name: "svc_http_requests_total",
      help: "HTTP requests answered, by method, route template (unmatched: no route) and status.",
      labelNames: ["method", "route", "status"],
      registers,
      collect() {
        this.reset();
        for (const { labels, count } of counts.requests.values()) this.inc(labels, count);
      },
    });
    this.#backlogGauges(registers);
  }

  /** The two gauges of the queue's backlog, set from one reading when scraped. */
  #backlogGauges(registers: Registry[]): void {
    // `collect` is called on the gauge: what it needs of the metrics, it takes from here.
    const read = (): Promise<QueueBacklog> => this.#readBacklog();
    const now = (): number => this.#sources.clock.now().getTime();
    new Gauge({
      name: "svc_deliveries_pending",
      help: "Deliveries not yet ended (waiting, being attempted, or waiting for a retry), in the whole database; counted up to 100000, which it reads when there are more.",
      registers,
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: "svc_delivery_lag_seconds",
      help: "How long the oldest due delivery has waited past its due time; 0 when none is overdue.",
      registers,
      async collect() {
        const { oldestDueAt } = await read();
        this.set(oldestDueAt === null ? 0 : Math.max(0, now() - oldestDueAt.getTime()) / 1000);
      },
    });
  }

  /** The backlog, read at most once per `backlogReadEveryMs`, whoever asks meanwhile. */
  #readBacklog(): Promise<QueueBacklog> {
    const now = this.#sources.clock.now().getTime();
    if (this.#backlog === null || now - this.#backlog.readAt >= backlogReadEveryMs) {
      const reading = this.#sources.backlog().then(
        (backlog) => {
          this.#lastBacklog = backlog;
          return backlog;
        },
        (error: unknown) => {
          this.#sources.onBacklogError(error);
          return this.#lastBacklog;
        },
      );
      this.#backlog = { readAt: now, reading };
    }
    return this.#backlog.reading;
  }

  /** An event was accepted. */
  eventPublished(): void {
    this.#counts.published += 1;
  }

  /** A request was answered; `route` is its template, or `unmatched`. */
  requestAnswered(method: string, route: string, status: number): void {
    const key = `${method} ${route} ${status}`;
    const counted = this.#counts.requests.get(key);
    if (counted === undefined) {
      this.#counts.requests.set(key, {
        labels: { method, route, status: String(status) },
        count: 1,
      });
    } else {
      counted.count += 1;
    }
  }

  attemptStarted(): void {
    this.#counts.inFlight += 1;
  }

  attemptFinished(finished: AttemptFinished): void {
    this.#counts.inFlight -= 1;
    // No exchange, no attempt: the delivery ended before one (its destination was deleted).
    if (finished.exchange === null) return;
    this.#counts.attempts[finished.outcome] += 1;
    this.#attemptSeconds.observe(finished.exchange.durationMs / 1000);
  }

  /** The Prometheus text exposition of every series. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }
}
