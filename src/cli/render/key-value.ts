import { printable } from "./printable.ts";
import { displayValue, isRecord } from "./values.ts";

/**
 * One resource as `key: value` lines, values aligned; a nested object (such as
 * `last_delivery`) as indented lines below its key (`{}` when empty), and null as `none`.
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
      // An empty object (a workspace's metadata) as the table shows it, not as a blank line.
      if (isRecord(value) && Object.keys(value).length === 0) return `${label} {}`;
      if (isRecord(value)) return `${indent}${name}:\n${renderKeyValue(value, `${indent}  `)}`;
      return `${label} ${displayValue(value)}`;
    })
    .join("\n");
}
