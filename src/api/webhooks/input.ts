import { z } from "zod";
import { AppError } from "../../errors.ts";
import { asSubscriptions, eventNamesProblem } from "../../event-names.ts";

/**
 * The bodies and query of the destinations API, and how their problems map onto the error
 * catalog: a problem with `url` is `invalid_url`, with `events` `invalid_events`, anything
 * else `invalid_request`, always naming the member.
 */

const events = z.array(z.string()).transform((names, context) => {
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

export const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).optional(),
});

export const destinationParams = z.object({ workspace: z.string(), id: z.string() });
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
  const message =
    code === "invalid_events" && issue.code !== "custom" ? undefined : `${param}: ${issue.message}`;
  throw new AppError(code, message, { param });
}
