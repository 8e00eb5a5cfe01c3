import type { z } from "zod";
import type { OperationId, operations } from "../contract/operations.ts";

/**
 * What each operation takes and answers, read from the contract's schemas (types only: no
 * zod is loaded at run time).
 */

type Op<K extends OperationId> = (typeof operations)[K];

/**
 * The query as the document types it: a member the API reads as digits (`limit`) is a number;
 * the others are the text they are sent as.
 */
type WireQuery<S extends z.ZodType> = {
  [M in keyof z.input<S>]: M extends keyof z.output<S>
    ? NonNullable<z.output<S>[M]> extends number
      ? Exclude<z.input<S>[M], string> | number
      : z.input<S>[M]
    : z.input<S>[M];
};

type ParamsOf<K extends OperationId> =
  Op<K> extends { readonly params: infer S extends z.ZodType }
    ? { readonly params: z.input<S> }
    : { readonly params?: undefined };
type QueryOf<K extends OperationId> =
  Op<K> extends { readonly query: infer S extends z.ZodType }
    ? { readonly query?: WireQuery<S> }
    : { readonly query?: undefined };
/** A body that may be `{}` may be left out: the API reads no body as `{}`. */
type BodyOf<K extends OperationId> =
  Op<K> extends { readonly body: infer S extends z.ZodType }
    ? object extends z.input<S>
      ? { readonly body?: z.input<S> }
      : { readonly body: z.input<S> }
    : { readonly body?: undefined };

/** Per request: an Idempotency-Key, a signal to abort it. */
export interface RequestOptions {
  /**
   * Sent as `Idempotency-Key` (1 to 255 printable ASCII characters). A change without one
   * gets a new key per call, so that its retries replay rather than repeat it.
   */
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

/** `call(operation, input)`'s input: the path's parameters, the query, the body. */
export type OperationInput<K extends OperationId> = ParamsOf<K> &
  QueryOf<K> &
  BodyOf<K> &
  RequestOptions;

/** What an operation answers on success. */
export type OperationOutput<K extends OperationId> = z.output<Op<K>["success"]["schema"]>;

/** The operations that answer a page (`{ data, next_cursor }`) and take a cursor. */
export type ListOperationId = {
  [K in OperationId]: Op<K> extends { readonly query: z.ZodObject<infer Shape> }
    ? "cursor" extends keyof Shape
      ? K
      : never
    : never;
}[OperationId];

/** One item of a list operation's page. */
export type ItemOf<K extends ListOperationId> =
  OperationOutput<K> extends { data: readonly (infer T)[] } ? T : never;

/** A successful answer with what its headers said. */
export interface Answer<T> {
  readonly status: number;
  readonly body: T;
  /** `Idempotent-Replayed: true`: the answer of an earlier request with the same key. */
  readonly replayed: boolean;
  readonly headers: Headers;
}
