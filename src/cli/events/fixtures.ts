import { randomBytes } from "node:crypto";
import type { EventType } from "../../interfaces.ts";

/**
 * A sample `data.object` of each event type, for `svc events send` without `--data`: with
 * `svc listen`, one command exercises a receiver as a real event would (as `stripe trigger`
 * does). Each call makes new ids, so that a receiver's own deduplication does not hide it.
 */
export function fixtureFor(type: EventType, now = new Date()): Record<string, unknown> {
  const suffix = randomBytes(6).toString("hex");
  const started = new Date(now.getTime() - 42_000).toISOString();
  const ended = now.toISOString();
  switch (type) {
    case "job.completed":
      return {
        id: `job_${suffix}`,
        status: "completed",
        started_at: started,
        completed_at: ended,
        result: { records: 1280, duration_ms: 42_000 },
      };
    case "job.failed":
      return {
        id: `job_${suffix}`,
        status: "failed",
        started_at: started,
        failed_at: ended,
        error: { code: "timeout", message: "the job did not finish within 30 s" },
        attempt: 3,
      };
    case "collection.completed":
      return {
        id: `col_${suffix}`,
        status: "completed",
        completed_at: ended,
        jobs: { total: 3, completed: 2, failed: 1 },
      };
  }
}
