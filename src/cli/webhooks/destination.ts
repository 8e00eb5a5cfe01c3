import { z } from "zod";
import { AppError } from "../../errors.ts";
import type { ApiResponse } from "../client/http.ts";
import { usageError } from "../usage.ts";

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
export const listPageSchema = z.object({
  data: z.array(destination),
  next_cursor: z.string().nullable(),
});
export const deletionSchema = z.looseObject({ id: z.string(), deleted: z.literal(true) });

/** A 2xx body in the shape the contract gives it, or `bad_response` saying what is off. */
export function parseBody<T extends z.ZodType>(schema: T, response: ApiResponse): z.output<T> {
  const result = schema.safeParse(response.body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "the body" : issue.path.join(".");
  throw new AppError(
    "bad_response",
    `The API answered HTTP ${response.status} with an unexpected body (${where}: ${issue?.message ?? "invalid"}). Are svc and the server the same version?`,
  );
}

/** Signing secrets are returned by create alone; anything else that carries one drops it. */
export function withoutSecret<T extends Record<string, unknown>>(record: T): Omit<T, "secret"> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => key !== "secret")) as Omit<
    T,
    "secret"
  >;
}

/** One segment of an API path: encoded, and never empty, `.` or `..` (which would move up). */
function segment(value: string, what: string, command: string): string {
  if (value === "" || value === "." || value === "..") {
    throw usageError(command, `${JSON.stringify(value)} is not a valid ${what}.`);
  }
  return encodeURIComponent(value);
}

export function webhooksPath(workspace: string, command: string): string {
  return `v1/workspaces/${segment(workspace, "workspace id", command)}/webhooks`;
}

export function webhookPath(workspace: string, id: string, command: string): string {
  return `${webhooksPath(workspace, command)}/${segment(id, "destination id", command)}`;
}
