import type { z } from "zod";
import type { OperationId, operations } from "../contract/operations.ts";

/**
 * What each operation takes and answers, read from the contract's schemas (types only: no
 * zod is loaded at run time).
 */

type Op<K extends OperationId> = (typeof operations)[K];

/** A query member the API reads from digits may be given as a number. */
type Loose<T> = { [M in keyof T]: T[M] extends string | undefined ? T[M] | number : T[M] };

type ParamsOf<K extends OperationId> =
  Op<K> extends { readonly params: infer S extends z.ZodType }
    ? { readonly params: z.input<S> }
    : { readonly params?: undefined };
type QueryOf<K extends OperationId> =
  Op<K> extends { readonly query: infer S extends z.ZodType }
    ? { readonly query?: Loose<z.input<S>> }
    : { readonly query?: undefined };
type BodyOf<K extends OperationId> =
  Op<K> extends { readonly body: infer S extends z.ZodType }
    ? { readonly body: z.input<S> }
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
