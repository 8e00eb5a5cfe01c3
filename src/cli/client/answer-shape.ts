import type { z } from "zod";

/**
 * The shape of an API answer as a command checks it without loading zod (issue 33): the
 * contract's zod schemas (`src/contract/`) stay the one definition of the answers, and zod
 * with them is ~95 modules, most of what a read such as `svc webhooks list` would load. A
 * command checks an answer with a small guard written here instead; only an answer the guard
 * refuses loads the contract's schema, which then decides, and gives the error its words.
 * `test/cli/answer-shapes.test.ts` holds each guard to its schema on valid answers and on
 * every member missing, mistyped or added, so the two cannot drift apart.
 */

/** True when `value` is one the contract's schema accepts; never for one it refuses. */
export type Guard<T> = (value: unknown) => value is T;

export interface AnswerShape<T> {
  readonly accepts: Guard<T>;
  /** The contract's schema of the same answer, loaded only when `accepts` refuses one. */
  readonly schema: () => Promise<z.ZodType>;
}

/** The members of an object guard, in the contract's order (what `--fields` takes). */
export interface ObjectGuard<T> extends Guard<T> {
  readonly members: readonly string[];
}

export const isString: Guard<string> = (value) => typeof value === "string";
export const isBoolean: Guard<boolean> = (value) => typeof value === "boolean";
/** zod's `.int()`: a safe integer. */
export const isInteger: Guard<number> = (value): value is number => Number.isSafeInteger(value);

/** One of the given values (zod's `enum` and `literal`). */
export function oneOf<const V extends string | boolean | null>(values: readonly V[]): Guard<V> {
  return (value): value is V => values.includes(value as V);
}

export function nullable<T>(guard: Guard<T>): Guard<T | null> {
  return (value): value is T | null => value === null || guard(value);
}

export function optional<T>(guard: Guard<T>): Guard<T | undefined> {
  return (value): value is T | undefined => value === undefined || guard(value);
}

export function arrayOf<T>(guard: Guard<T>): Guard<T[]> {
  return (value): value is T[] => Array.isArray(value) && value.every((item) => guard(item));
}

/** Either guard's values (zod's `union` and `discriminatedUnion`). */
export function either<A, B>(first: Guard<A>, second: Guard<B>): Guard<A | B> {
  return (value): value is A | B => first(value) || second(value);
}

type Guarded<M> = { [K in keyof M]: M[K] extends Guard<infer T> ? T : never };

/** An object, not an array (zod's `object`, and its `record` of any values). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An object with these members (zod's `object`): members it does not name are allowed and
 * kept, as zod's `object` allows them (a newer server may add some).
 */
export function objectOf<M extends Record<string, Guard<unknown>>>(
  members: M,
): ObjectGuard<Guarded<M>> {
  const entries = Object.entries(members);
  const guard = (value: unknown): value is Guarded<M> =>
    isRecord(value) &&
    entries.every(([name, member]) => member(Object.hasOwn(value, name) ? value[name] : undefined));
  return Object.assign(guard, { members: Object.keys(members) });
}

/** An object whose every member's value passes `guard` (zod's `record` of string keys). */
export function recordOf<T>(guard: Guard<T>): Guard<Record<string, T>> {
  return (value): value is Record<string, T> =>
    isRecord(value) && Object.values(value).every((member) => guard(member));
}

/** A schema already loaded, as a shape: for the commands that still check with zod itself. */
export function zodShape<S extends z.ZodType>(schema: S): AnswerShape<z.output<S>> {
  return {
    accepts: (value): value is z.output<S> => schema.safeParse(value).success,
    schema: () => Promise.resolve(schema),
  };
}
