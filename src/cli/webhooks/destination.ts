import { pathSegment, workspacePath } from "../client/api-paths.ts";
import { z } from "zod";

/**
 * The destinations API as the command line reads it (CONTRACT.md "HTTP API"). Members the
 * API may add later are kept, after the known ones; a secret is kept only where the API issues
 * one (create), and is never printed.
 */

export const DESTINATION_FIELDS = [
  "id",
  "url",
  "events",
  "active",
  "created_at",
  "updated_at",
] as const;

const destination = z.looseObject({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Destination = z.infer<typeof destination>;

export const destinationSchema = destination;
export const destinationWithDeliverySchema = destination.extend({
  last_delivery: z.record(z.string(), z.unknown()).nullable(),
});
export const createdDestinationSchema = destination.extend({ secret: z.string().min(1) });
export const deletionSchema = z.looseObject({ id: z.string(), deleted: z.literal(true) });

/** Signing secrets are returned by create alone; anything else that carries one drops it. */
export function withoutSecret<T extends Record<string, unknown>>(record: T): Omit<T, "secret"> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => key !== "secret")) as Omit<
    T,
    "secret"
  >;
}

export function webhooksPath(workspace: string, command: string): string {
  return `${workspacePath(workspace, command)}/webhooks`;
}

export function webhookPath(workspace: string, id: string, command: string): string {
  return `${webhooksPath(workspace, command)}/${pathSegment(id, "destination id", command)}`;
}
