import { printable } from "./printable.ts";
import { isRecord } from "./values.ts";

/**
 * JSON data as YAML (block style). Strings stay plain only when no YAML reader could take them
 * for anything else (a number, a boolean, a date, an alias such as `*`); every other string is
 * double-quoted, using JSON's escapes, which YAML shares.
 */
export function toYaml(value: unknown): string {
  return block(value, "").join("\n");
}

const plainString = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const reservedWords = /^(true|false|yes|no|on|off|y|n|null)$/i;

function scalar(value: unknown): string {
  if (typeof value === "string") {
    // JSON's escapes are YAML's; `printable` adds \uXXXX for what JSON leaves as it is.
    return plainString.test(value) && !reservedWords.test(value)
      ? value
      : printable(JSON.stringify(value));
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return "null";
}

function isEmptyCollection(value: unknown): boolean {
  return Array.isArray(value)
    ? value.length === 0
    : isRecord(value) && Object.keys(value).length === 0;
}

function isCollection(value: unknown): boolean {
  return (Array.isArray(value) || isRecord(value)) && !isEmptyCollection(value);
}

function inline(value: unknown): string {
  if (isEmptyCollection(value)) return Array.isArray(value) ? "[]" : "{}";
  return scalar(value);
}

function block(value: unknown, indent: string): string[] {
  if (Array.isArray(value) && value.length > 0) {
    return value.flatMap((item) => {
      if (!isCollection(item)) return [`${indent}- ${inline(item)}`];
      // The first line of a nested collection shares the dash's line.
      const [first = "", ...rest] = block(item, `${indent}  `);
      return [`${indent}- ${first.slice(indent.length + 2)}`, ...rest];
    });
  }
  if (isRecord(value) && Object.keys(value).length > 0) {
    return Object.entries(value).flatMap(([key, member]) =>
      isCollection(member)
        ? [`${indent}${scalar(key)}:`, ...block(member, `${indent}  `)]
        : [`${indent}${scalar(key)}: ${inline(member)}`],
    );
  }
  return [`${indent}${inline(value)}`];
}
