import type { Clock } from "../../src/interfaces.ts";

/** A clock the test moves by hand. */
export function manualClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => new Date(now),
    nowMs: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}
