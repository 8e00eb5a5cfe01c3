import type { FastifyBaseLogger } from "fastify";
import { SIGN_IN_LIMITS } from "../api/auth/sign-in-limits.ts";
import { unnamedListenSessionTtlMs } from "../api/listen/settings.ts";
import type { Clock } from "../interfaces.ts";
import type { Housekeeping } from "../store/housekeeping.ts";

const intervalMs = 3_600_000;

/**
 * Housekeeping, hourly and once at start: prunes attempt records, and events whose
 * deliveries have all ended, past their retention; purges expired idempotency keys, ended
 * sessions and ended sign-in windows; ends unused listen sessions; gives deliveries an older
 * release queued their workspace (a rolling upgrade). Each task runs whatever the others did:
 * one that fails (the database briefly gone, a lock timeout) is logged with its name and
 * tried again at the next round, and does not hold back the rest for an hour.
 */
export function startMaintenance(
  store: { readonly housekeeping: Housekeeping },
  clock: Clock,
  logger: FastifyBaseLogger,
  options: { attemptRetentionMs: number; eventRetentionMs: number; listenSessionTtlMs: number },
): { stop(): Promise<void> } {
  const { housekeeping } = store;
  const ago = (ms: number): Date => new Date(clock.now().getTime() - ms);
  const task = async (name: string, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      logger.error({ err: error, task: name }, "maintenance task failed; trying again in an hour");
    }
  };
  const round = async (): Promise<void> => {
    const pruned: Record<string, number> = {};
    await task("prune_attempts", async () => {
      pruned.attempts = await housekeeping.pruneAttempts(ago(options.attemptRetentionMs));
    });
    await task("prune_events", async () => {
      pruned.events = await housekeeping.pruneEvents(ago(options.eventRetentionMs));
    });
    await task("purge_idempotency_keys", async () => {
      pruned.idempotency_keys = await housekeeping.purgeIdempotencyKeys();
    });
    await task("purge_auth_records", async () => {
      pruned.auth = await housekeeping.purgeAuthRecords({
        signInWindowMs: SIGN_IN_LIMITS.windowMs,
      });
    });
    if (Object.values(pruned).some((count) => count > 0)) {
      logger.info(pruned, "pruned expired records");
    }
    await task("expire_listen_sessions", async () => {
      const sessions = await housekeeping.expireListenSessions(
        ago(options.listenSessionTtlMs),
        ago(Math.min(options.listenSessionTtlMs, unnamedListenSessionTtlMs)),
      );
      if (sessions > 0) logger.info({ listen_sessions: sessions }, "ended unused listen sessions");
    });
    await task("adopt_older_deliveries", async () => {
      const adopted = await housekeeping.adoptOlderDeliveries();
      if (adopted > 0) {
        logger.info({ deliveries: adopted }, "gave deliveries of an older release their workspace");
      }
    });
  };
  let running = round();
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
