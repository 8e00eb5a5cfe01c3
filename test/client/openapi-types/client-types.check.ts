/**
 * The client's types against the document's, both ways, for every operation (issue 30: "the
 * client compiled against the document"). `openapi.d.ts` is what openapi-typescript makes of
 * docs/openapi.json; the client's types come from the contract's zod schemas (decision 44).
 * Where they part, this file does not compile: test/client/openapi-types.test.ts runs
 * `tsc --noEmit` on it (its own small tsconfig), and `npm run typecheck` compiles it too.
 * Types only: nothing here runs.
 */
import type { OperationId } from "../../../src/contract/operations.ts";
import type { OperationInput, OperationOutput } from "../../../src/client/index.ts";
import type { operations } from "./openapi.d.ts";

/** True when each of A and B is assignable to the other (tuples: no distribution). */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

type Documented<K extends keyof operations> = operations[K];
type Parameters<K extends keyof operations> = Documented<K>["parameters"];
/** A member of `never` type is the generator's "none": read it as absent. */
type Present<T> = [T] extends [never] ? undefined : T;

type DocumentedPath<K extends keyof operations> = Present<NonNullable<Parameters<K>["path"]>>;
type DocumentedQuery<K extends keyof operations> = Present<NonNullable<Parameters<K>["query"]>>;
/** The JSON body, `| undefined` when the document does not require one. */
type DocumentedBody<K extends keyof operations> =
  Present<Documented<K>["requestBody"]> extends infer R
    ? R extends { content: { "application/json": infer B } }
      ? B
      : undefined
    : never;
/** The 2xx answer's body: JSON, or for the listen stream one event of it. */
type DocumentedAnswer<K extends keyof operations> = {
  [S in keyof Documented<K>["responses"]]: S extends 200 | 201 | 202
    ? Documented<K>["responses"][S] extends { content: infer C }
      ? C[keyof C]
      : never
    : never;
}[keyof Documented<K>["responses"]];

type ClientPath<K extends OperationId> = NonNullable<OperationInput<K>["params"]> | undefined;
type ClientQuery<K extends OperationId> = NonNullable<OperationInput<K>["query"]> | undefined;
type ClientBody<K extends OperationId> = OperationInput<K>["body"];

/** Per operation, per part: does the client's type match the document's both ways? */
type Agreement = {
  [K in OperationId]: K extends keyof operations
    ? {
        path: Mutual<ClientPath<K>, DocumentedPath<K> | undefined>;
        query: Mutual<ClientQuery<K>, DocumentedQuery<K> | undefined>;
        body: Mutual<ClientBody<K>, DocumentedBody<K>>;
        answer: Mutual<OperationOutput<K>, DocumentedAnswer<K>>;
      }
    : "not in the document";
};
/** The operations and parts that differ: `"createWebhook.body"`; never when none does. */
type Mismatch = {
  [K in OperationId]: {
    [P in keyof Agreement[K] & string]: Agreement[K][P] extends true ? never : `${K}.${P}`;
  }[keyof Agreement[K] & string];
}[OperationId];

/** The document's operations are the client's, no more and no fewer. */
export const sameOperations: Mutual<keyof operations, OperationId> = true;

/** Empty when all agree; else the compiler names each missing member: `createWebhook.body`. */
// eslint-disable-next-line @typescript-eslint/no-generated-empty-object-type -- empty is the point: no mismatch.
export const mismatches: Record<Mismatch, never> = {};

// The check itself is checked: a body that differs from the document by one member's type
// must fail it, or the line below would not be an error and this file would not compile.
type WrongBody = Omit<NonNullable<ClientBody<"createWebhook">>, "url"> & { url: number };
// @ts-expect-error -- a destination's url is a string in the document, not a number.
export const wrongBodyAgrees: Mutual<WrongBody, DocumentedBody<"createWebhook">> = true;
