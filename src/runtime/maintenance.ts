import type { FastifyBaseLogger } from "fastify";
import { SIGN_IN_LIMITS } from "../api/auth/sign-in-limits.ts";
import { unnamedListenSessionTtlMs } from "../api/listen/settings.ts";
import type { Clock } from "../interfaces.ts";
import type { Housekeeping } from "../store/housekeeping.ts";

const intervalMs = 3_600_000;

/**
 * Housekeeping, hourly and once at start: prunes attempt records, and events whose
 * deliveries have all ended, past their retention; purges expired idempotency keys, ended
 * sessions and ended sign-in windows; ends unused listen sessions; gives deliveries an older release queued their
 * workspace (a rolling upgrade). Errors are logged; the next round tries again.
 */
export function startMaintenance(
  store: { readonly housekeeping: Housekeeping },
  clock: Clock,
  logger: FastifyBaseLogger,
  options: { attemptRetentionMs: number; eventRetentionMs: number; listenSessionTtlMs: number },
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const round = async (): Promise<void> => {
    try {
      const before = new Date(clock.now().getTime() - options.attemptRetentionMs);
      const attempts = await store.housekeeping.pruneAttempts(before);
      const events = await store.housekeeping.pruneEvents(
        new Date(clock.now().getTime() - options.eventRetentionMs),
      );
      const keys = await store.housekeeping.purgeIdempotencyKeys();
      const auth = await store.housekeeping.purgeAuthRecords({
        signInWindowMs: SIGN_IN_LIMITS.windowMs,
      });
      if (attempts + events + keys + auth > 0) {
        logger.info({ attempts, events, idempotency_keys: keys, auth }, "pruned expired records");
      }
      const now = clock.now().getTime();
      const sessions = await store.housekeeping.expireListenSessions(
        new Date(now - options.listenSessionTtlMs),
        new Date(now - Math.min(options.listenSessionTtlMs, unnamedListenSessionTtlMs)),
      );
      if (sessions > 0) logger.info({ listen_sessions: sessions }, "ended unused listen sessions");
      const adopted = await store.housekeeping.adoptOlderDeliveries();
      if (adopted > 0) {
        logger.info({ deliveries: adopted }, "gave deliveries of an older release their workspace");
      }
    } catch (error) {
      logger.error({ err: error }, "maintenance failed; trying again in an hour");
    }
  };
  running = round();
  const timer = setInterval(() => {
    running = round();
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
