import type { Style } from "./colour.ts";
import { printable } from "./printable.ts";
import { displayValue } from "./values.ts";

/** Columns padded to their widest cell, two spaces apart; headers are the member names. */
export function renderTable(
  records: readonly Readonly<Record<string, unknown>>[],
  columns: readonly string[],
  style: Style,
): string {
  const rows = records.map((record) => columns.map((column) => displayValue(record[column])));
  const headers = columns.map((column) => printable(column.toUpperCase()));
  const widths = headers.map((header, index) =>
    Math.max(header.length, ...rows.map((row) => (row[index] ?? "").length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, index) => (index === cells.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join("  ");
  return [style.bold(line(headers)), ...rows.map(line)].join("\n");
}
