import { performance } from "node:perf_hooks";
import type { FastifyInstance } from "fastify";
import { workspaceParams } from "../../contract/common.ts";
import {
  deliveryStatsQuery,
  statsWindow,
  type DestinationHealthBody,
} from "../../contract/delivery-stats.ts";
import {
  accessConfig,
  operations,
  routePath,
  successBody,
  type SuccessBody,
} from "../../contract/operations.ts";
import type { DestinationHealth } from "../../store/delivery-log.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput } from "../parse-input.ts";

function healthBody(health: DestinationHealth): DestinationHealthBody {
  return {
    destination_id: health.destinationId,
    attempts: health.attempts,
    succeeded: health.succeeded,
    success_rate: health.attempts === 0 ? 1 : health.succeeded / health.attempts,
    last_attempt_at: health.lastAttemptAt?.toISOString() ?? null,
    last_status_code: health.lastStatusCode,
    failing_since: health.failingSince?.toISOString() ?? null,
  };
}

/**
 * `GET …/delivery-stats` (decision 35): the window ends with the current hour, so that its
 * buckets are whole hours of the clock and the chart's last bar grows as the hour goes on.
 * It reads the hourly counters kept as attempts are recorded (decision 36): 24 rows per
 * destination attempted in the window, whatever the day's volume.
 */
export function registerDeliveryStatsRoute(
  app: FastifyInstance,
  dependencies: ApiDependencies,
): void {
  const { store, clock } = dependencies;
  const { getDeliveryStats } = operations;
  /**
   * Answers kept for `statsCacheMs`, by workspace and destination, the one being computed
   * shared by every request that asks meanwhile: on SQLite the query holds the event loop, so
   * many tabs (or a client asking in a loop) must not each run it (issue 21's review). Reading
   * counters, it costs milliseconds now (decision 36); the cache still folds the dashboard's
   * tabs into one query a second.
   */
  const recent = new Map<string, { at: number; answer: Promise<StatsAnswer> }>();
  const compute = async (workspace: string, destination: string | null): Promise<StatsAnswer> => {
    const now = clock.now().getTime();
    const currentHour = now - (now % statsWindow.bucketMs);
    const since = new Date(currentHour - (statsWindow.buckets - 1) * statsWindow.bucketMs);
    const [buckets, health] = await Promise.all([
      store.log.attemptBuckets(workspace, destination, { since, ...statsWindow }),
      store.log.destinationHealth(workspace, destination, since),
    ]);
    return {
      since: since.toISOString(),
      bucket_seconds: statsWindow.bucketMs / 1000,
      buckets: buckets.map((bucket) => ({
        start: bucket.start.toISOString(),
        succeeded: bucket.succeeded,
        failed: bucket.failed,
      })),
      destinations: health.map(healthBody),
    };
  };
  app.get(routePath(getDeliveryStats), accessConfig(getDeliveryStats), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const { destination = null } = parseInput(deliveryStatsQuery, request.query);
    const key = `${workspace} ${destination ?? ""}`;
    // The process's own time: how often the query runs, not what it reads.
    const now = performance.now();
    let kept = recent.get(key);
    if (kept === undefined || now - kept.at >= statsCacheMs) {
      for (const [other, entry] of recent) if (now - entry.at >= statsCacheMs) recent.delete(other);
      kept = { at: now, answer: compute(workspace, destination) };
      recent.set(key, kept);
      // A failure is not kept: the next request computes again.
      kept.answer.catch(() => recent.delete(key));
    }
    return successBody(getDeliveryStats, await kept.answer);
  });
}

/** How long a delivery-stats answer is reused: at most one query a second per workspace and destination. */
const statsCacheMs = 1000;

type StatsAnswer = SuccessBody<typeof operations.getDeliveryStats>;
