import { z } from "zod";
import { AppError } from "../../errors.ts";
import { asSubscriptions, eventNamesProblem } from "../../event-names.ts";

/**
 * The bodies and query of the destinations API, and how their problems map onto the error
 * catalog: a problem with `url` is `invalid_url`, with `events` `invalid_events`, anything
 * else `invalid_request`, always naming the member.
 */

/** More names than any subscription needs: a longer list is refused before its elements are read. */
export const MAX_EVENT_NAMES = 32;

const events = z
  .array(z.unknown())
  .max(MAX_EVENT_NAMES, { error: `events may list at most ${MAX_EVENT_NAMES} names` })
  .pipe(z.array(z.string()))
  .transform((names, context) => {
    const problem = eventNamesProblem(names);
    if (problem !== null) {
      context.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    // Duplicates are dropped; the order given is kept.
    return asSubscriptions([...new Set(names)]);
  });

export const createBody = z.strictObject({
  url: z.string({ error: "url is required and must be a string" }),
  events: events.default(["*"]),
});

export const updateBody = z.strictObject({
  url: z.string().optional(),
  events: events.optional(),
  active: z.boolean({ error: "active must be true or false" }).optional(),
});

/**
 * A whole number in a query string: decimal digits only (no sign, spaces, hex or exponent),
 * from `min` to `max`.
 */
export function queryInteger(min: number, max: number) {
  return z
    .string()
    .regex(/^[0-9]{1,9}$/, { error: `must be a whole number from ${min} to ${max}, in digits` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    );
}

export const listQuery = z.strictObject({
  limit: queryInteger(1, 100).default(20),
  cursor: z.string().min(1).optional(),
});

export const destinationParams = z.object({ workspace: z.string(), id: z.string() });

/**
 * Whether a path's id could name anything: ids are letters, digits, `_` and `-` (`newId`).
 * Anything else names nothing (a 404, or a 403 for a workspace) without asking the database,
 * where a NUL is not even a valid parameter for PostgreSQL.
 */
export function isWellFormedId(text: string): boolean {
  return /^[A-Za-z0-9_-]{1,100}$/.test(text);
}
export const workspaceParams = z.object({ workspace: z.string() });

const codeFor = { url: "invalid_url", events: "invalid_events" } as const;

export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  if (value === undefined || value === null) value = {};
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  if (issue === undefined) throw new AppError("invalid_request");
  if (issue.code === "unrecognized_keys") {
    const [key = ""] = issue.keys;
    throw new AppError("invalid_request", `Unknown parameter ${JSON.stringify(key)}.`, {
      param: key,
    });
  }
  const param = issue.path.map(String).join(".");
  if (param === "") {
    throw new AppError("invalid_request", "The request body must be a JSON object.");
  }
  const member = issue.path[0];
  const code = member === "url" || member === "events" ? codeFor[member] : "invalid_request";
  // A wrong type or name among the events has the catalog's message, which lists the names.
  const generic = code === "invalid_events" && issue.code !== "custom" && issue.code !== "too_big";
  const message = generic ? undefined : `${param}: ${issue.message}`;
  throw new AppError(code, message, { param });
}
