import type { Scope } from "./types.ts";

/** Write implies read, as on the server. */
export function grants(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.some(
    (scope) =>
      scope === needed ||
      (scope === "webhooks:write" && needed === "webhooks:read") ||
      (scope === "events:write" && needed === "events:read"),
  );
}

/** A time as people read it, in their own zone; the ISO form stays in the `datetime`. */
export function formatTime(iso: string | null): string {
  if (iso === null) return "—";
  return new Date(iso).toLocaleString(undefined, {
    dateStyle: "medium",
    timeStyle: "medium",
  });
}

export function formatRate(rate: number): string {
  return `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)}%`;
}

/** An attempt's outcome: its status code, or the error when there was no answer. */
export function outcomeOf(statusCode: number | null, error: string | null): string {
  if (statusCode !== null) return String(statusCode);
  return error ?? "no answer";
}

/** A text field of a submitted form ("" when absent). */
export function fieldOf(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === "string" ? value : "";
}

const units: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1000],
];

/** A time relative to `now`, as people say it: "3 minutes ago", "in 12 seconds". */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const difference = new Date(iso).getTime() - now;
  const size = Math.abs(difference);
  if (size < 1000) return "now";
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, ms] of units) {
    if (size >= ms || unit === "second") {
      return format.format(Math.trunc(difference / ms), unit);
    }
  }
  return formatTime(iso);
}

/** "1 attempt", "2 attempts". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
