import type { FastifyInstance } from "fastify";
import { workspaceParams } from "../../contract/common.ts";
import {
  deliveryStatsQuery,
  statsWindow,
  type DestinationHealthBody,
} from "../../contract/delivery-stats.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
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
 * Its cost grows with the instance's attempts of the day (docs/PERFORMANCE.md, issue 21), so
 * the dashboard asks for it less often than for the delivery log.
 */
export function registerDeliveryStatsRoute(
  app: FastifyInstance,
  dependencies: ApiDependencies,
): void {
  const { store, clock } = dependencies;
  const { getDeliveryStats } = operations;
  app.get(routePath(getDeliveryStats), accessConfig(getDeliveryStats), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const { destination = null } = parseInput(deliveryStatsQuery, request.query);
    const now = clock.now().getTime();
    const currentHour = now - (now % statsWindow.bucketMs);
    const since = new Date(currentHour - (statsWindow.buckets - 1) * statsWindow.bucketMs);
    const [buckets, health] = await Promise.all([
      store.log.attemptBuckets(workspace, destination, { since, ...statsWindow }),
      store.log.destinationHealth(workspace, destination, since),
    ]);
    return successBody(getDeliveryStats, {
      since: since.toISOString(),
      bucket_seconds: statsWindow.bucketMs / 1000,
      buckets: buckets.map((bucket) => ({
        start: bucket.start.toISOString(),
        succeeded: bucket.succeeded,
        failed: bucket.failed,
      })),
      destinations: health.map(healthBody),
    });
  });
}
