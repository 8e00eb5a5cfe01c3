import { printable } from "./printable.ts";
import { displayValue, isRecord } from "./values.ts";

/**
 * One resource as `key: value` lines, values aligned; a nested object (such as
 * `last_delivery`) as indented lines below its key, and null as `none`.
 */
export function renderKeyValue(record: Readonly<Record<string, unknown>>, indent = ""): string {
  const keys = Object.keys(record);
  const width = Math.max(0, ...keys.map((key) => printable(key).length + 1));
  return keys
    .map((key) => {
      const value = record[key];
      const name = printable(key);
      const label = `${indent}${`${name}:`.padEnd(width)}`;
      if (value === null) return `${label} none`;
      if (isRecord(value)) return `${indent}${name}:\n${renderKeyValue(value, `${indent}  `)}`;
      return `${label} ${displayValue(value)}`;
    })
    .join("\n");
}
