import { printable } from "./printable.ts";

/** One value as a person reads it in a table cell or after `key:`: printable. */
export function displayValue(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (typeof value === "string") return printable(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  // Lists are written as the --events flag takes them: comma-separated.
  if (Array.isArray(value)) return value.map(displayValue).join(",");
  return printable(JSON.stringify(value));
}

/**
 * One value for `--field`: a string bare, anything else as JSON (`true`, `null`, `["*"]`),
 * so that a script can tell them apart.
 */
export function bareValue(value: unknown): string {
  if (typeof value === "string") return value;
  return value === undefined ? "null" : JSON.stringify(value);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
