import type { BenchReceiver } from "./receiver.ts";
import type { BenchService } from "./service.ts";
import { percentile, pooled, round } from "./stats.ts";

/**
 * Requests sent before a throughput is measured, and not counted: the raw loop's, the
 * service's and the floor relay's alike. A fresh server's V8 goes on compiling its hot code
 * (TurboFan, on helper threads that take their share of the two cores) until about 13,000
 * events; after 2,000, the helper threads still spent ~45 µs of CPU per delivery, after
 * 15,000 ~10 µs (decision 21). A deployed server runs at that steady state.
 */
export const warmUpCount = 15_000;

/** Concurrent API clients publishing in the throughput measurements. */
export const publishers = 32;

export interface Throughput {
  deliveries_per_s: number;
  publish_p50_ms: number;
  publish_p99_ms: number;
}

export async function publish(service: BenchService, type: string, index: number): Promise<string> {
  const response = await service.call("POST", "/events", {
    type,
    data: { object: { id: `job_${index}`, status: "done" } },
  });
  if (response.status !== 202) throw new Error(`publish answered ${response.status}`);
  return (response.body as { id: string }).id;
}

/**
 * Publishes `count` events, `perSecond` of them a second; returns when each was sent, by id,
 * and adds each publish's answer time (ms) to `answered` if given.
 */
export async function publishPaced(
  service: BenchService,
  count: number,
  perSecond: number,
  answered?: number[],
): Promise<Map<string, number>> {
  const publishedAt = new Map<string, number>();
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let index = 0; index < count; index += 1) {
    const wait = started + (index * 1000) / perSecond - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sentAt = performance.now();
    pending.push(
      publish(service, "job.completed", index).then((id) => {
        answered?.push(performance.now() - sentAt);
        publishedAt.set(id, sentAt);
      }),
    );
  }
  await Promise.all(pending);
  return publishedAt;
}

export async function register(
  service: BenchService,
  url: string,
  events: string[],
): Promise<string> {
  const response = await service.call("POST", "/webhooks", { url, events });
  if (response.status !== 201) throw new Error(`create answered ${response.status}`);
  return (response.body as { id: string }).id;
}

/** Durable end to end: published through the API, committed, delivered, 2xx recorded. */
export async function measureThroughput(
  service: BenchService,
  receiver: BenchReceiver,
  count: number,
): Promise<Throughput> {
  receiver.reset();
  const latencies: number[] = [];
  const started = performance.now();
  await pooled(count, publishers, async (index) => {
    const sent = performance.now();
    await publish(service, "job.completed", index);
    latencies.push(performance.now() - sent);
  });
  await receiver.waitForDistinct(count, 600_000);
  const seconds = (performance.now() - started) / 1000;
  return {
    deliveries_per_s: round(count / seconds),
    publish_p50_ms: round(percentile(latencies, 50), 2),
    publish_p99_ms: round(percentile(latencies, 99), 2),
  };
}
