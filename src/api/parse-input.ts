import type { z } from "zod";
import { AppError } from "../errors.ts";

/**
 * Input as the API reads it: the contract's schemas (`src/contract/`) parse it, and their
 * problems map onto the error catalog here: a problem with `url` is `invalid_url`, with
 * `events` `invalid_events`, anything else `invalid_request`, always naming the member.
 */

/**
 * Whether a path's id could name anything: ids are letters, digits, `_` and `-` (`newId`).
 * Anything else names nothing (a 404, or a 403 for a workspace) without asking the database,
 * where a NUL is not even a valid parameter for PostgreSQL.
 */
export function isWellFormedId(text: string): boolean {
  return /^[A-Za-z0-9_-]{1,100}$/.test(text);
}

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
  // A schema may name the catalog's code of its problem (an operator's event type, decision 48).
  const named = issue.code === "custom" && issue.params?.code === "operational_event_type";
  const code = named
    ? "operational_event_type"
    : member === "url" || member === "events"
      ? codeFor[member]
      : "invalid_request";
  // A wrong type or name among the events has the catalog's message, which lists the names.
  const generic = code === "invalid_events" && issue.code !== "custom" && issue.code !== "too_big";
  const message = generic ? undefined : `${param}: ${issue.message}`;
  throw new AppError(code, message, { param });
}
