/// <reference types="zod-openapi" />
import { z } from "zod";
import { errorCatalog, type ErrorCode } from "../errors.ts";

/**
 * Pieces every part of the API's contract uses: times, pages, query integers, path
 * parameters and the error envelope (decision 31).
 */

/** A time as the API writes it: ISO 8601 in UTC, with milliseconds. */
export const isoTime = z
  .string()
  .meta({ format: "date-time", examples: ["2026-11-25T12:00:00.000Z"] });

/** A time as the API reads it in a query or body: ISO 8601 with a time and a zone. */
export const timeInput = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 time such as 2026-11-25T12:00:00Z" })
  .transform((text) => new Date(text))
  .meta({ examples: ["2026-11-25T12:00:00Z"] });

/**
 * A whole number in a query string: decimal digits only (no sign, spaces, hex or exponent),
 * from `min` to `max`. The server parses the query's text strictly; the document says what
 * that text must spell, an integer and its bounds (issue 30), which is what a client types
 * and a validating proxy checks: OpenAPI's query parameters are serialised from that schema.
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
    )
    .meta({
      override: ({ jsonSchema }) => {
        delete jsonSchema.pattern; // the digits' pattern is the string's, not the integer's
        Object.assign(jsonSchema, { type: "integer", minimum: min, maximum: max });
      },
    });
}

/** The members of an answer's object schema, in their order: what the CLI's `--fields` takes. */
export function membersOf(schema: z.ZodObject): string[] {
  return Object.keys(schema.shape);
}

/** `?limit=&cursor=` of every list. */
export const pageQuery = {
  limit: queryInteger(1, 100)
    .default(20)
    // Spelled out: zod renders no default, nor the examples, of a default over a transform.
    .meta({ description: "Items per page, 1 to 100.", override: { default: 20, examples: [20] } }),
  cursor: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "The previous page's `next_cursor`, for the page after it." }),
};

/** A page of a list, newest first; `next_cursor` continues it (null on the last page). */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: "Pass it back as `cursor` for the next page; null on the last." }),
  });
}

const workspace = z.string().meta({
  description: "The workspace's id.",
  examples: ["ws_0b7c3d5e9f1a2b4c6d8e0f12"],
});

export const workspaceParams = z.object({ workspace });

/** The path of a member route: the workspace and the member's id. */
export function memberParams(description: string, example: string) {
  return z.object({ workspace, id: z.string().meta({ description, examples: [example] }) });
}

/** The codes the API answers with (the catalog's entries that have an HTTP status). */
export const API_ERROR_CODES = Object.entries(errorCatalog)
  .filter(([, definition]) => definition.status !== null)
  .map(([code]) => code as ErrorCode);

function errorEnvelope<C extends z.ZodType<string>>(code: C) {
  return z.object({
    error: z.object({
      code,
      message: z.string().meta({ description: "What went wrong and what to do, for people." }),
      param: z
        .string()
        .optional()
        .meta({ description: "The parameter or member at fault, when there is one." }),
    }),
  });
}

/** Every refusal: `{"error":{"code","message","param"?}}`, the code from `docs/errors.md`. */
export const errorSchema = errorEnvelope(
  z.enum(API_ERROR_CODES as [ErrorCode, ...ErrorCode[]]).meta({
    description: "Stable and documented in docs/errors.md; branch on it, not the message.",
  }),
).meta({
  id: "Error",
  examples: [
    {
      error: { code: "not_found", message: "No webhook destination dst_… here.", param: "id" },
    },
  ],
});

/**
 * The same envelope with any code: what a client reads, so that a code newer than the client
 * is still an error it can show.
 */
export const anyErrorSchema = errorEnvelope(z.string());

export type ErrorBody = z.infer<typeof errorSchema>;
