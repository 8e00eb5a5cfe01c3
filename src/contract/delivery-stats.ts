import { z } from "zod";
import { isoTime } from "./common.ts";

/**
 * The delivery statistics the dashboard draws (decision 35): the last 24 hours of attempts in
 * hourly buckets, and each destination's health over the same window.
 */

export const statsWindow = { bucketMs: 3_600_000, buckets: 24 } as const;

export const deliveryStatsQuery = z.strictObject({
  destination: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "Only this destination's attempts (and health)." }),
});

const bucket = z.object({
  start: isoTime,
  succeeded: z.number().int().meta({ description: "Attempts answered 2xx." }),
  failed: z.number().int().meta({ description: "Attempts answered otherwise, or not at all." }),
});

export const destinationHealthSchema = z
  .object({
    destination_id: z.string().meta({ examples: ["dst_5f0c2a9e81b34d7c6a1e0f93"] }),
    attempts: z.number().int(),
    succeeded: z.number().int(),
    success_rate: z
      .number()
      .min(0)
      .max(1)
      .meta({ description: "`succeeded / attempts`, from 0 to 1." }),
    last_attempt_at: isoTime.nullable(),
    last_status_code: z.number().int().nullable(),
    failing_since: isoTime.nullable().meta({
      description:
        "The first failed attempt after the last success, within the window; null when the last attempt succeeded.",
    }),
  })
  .meta({ id: "DestinationHealth" });
export type DestinationHealthBody = z.infer<typeof destinationHealthSchema>;

export const deliveryStatsSchema = z
  .object({
    since: isoTime,
    bucket_seconds: z.number().int(),
    buckets: z.array(bucket).meta({ description: "Oldest first; the last is the current hour." }),
    destinations: z.array(destinationHealthSchema).meta({
      description: "Each destination attempted in the window; one not attempted is absent.",
    }),
  })
  .meta({ id: "DeliveryStats" });
