import type { ServerConfig } from "../../config/server-config.ts";
import { RetrySchedule } from "../../delivery/retry-schedule.ts";
import type { WakeUpSource } from "../../delivery/wake-ups.ts";
import type { ListenSettings } from "../dependencies.ts";

/**
 * An unnamed listen session left by a command that died: its command could resume it within
 * its reconnection time, no one after; it goes at the first maintenance round after an hour.
 */
export const unnamedListenSessionTtlMs = 3_600_000;

/** The listen settings of the server's configuration (decision 34). */
export function listenSettingsOf(
  config: Pick<
    ServerConfig,
    "listenSessionTtl" | "listenHeartbeat" | "deliveryLease" | "retrySchedule"
  >,
  wakeUps?: WakeUpSource,
): ListenSettings {
  return {
    sessionTtlMs: config.listenSessionTtl,
    heartbeatMs: config.listenHeartbeat,
    leaseMs: config.deliveryLease,
    schedule: new RetrySchedule(config.retrySchedule),
    ...(wakeUps === undefined ? {} : { wakeUps }),
  };
}
