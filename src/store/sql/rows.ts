/** Conversions between database values and domain values, shared by every SQL module. */

/** Times are stored as Unix milliseconds; PostgreSQL's driver returns BIGINT as a string. */
export function toDate(value: unknown): Date {
  return new Date(Number(value));
}

export function toNullableDate(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

/** SQLite stores booleans as 0/1. */
export function toBoolean(value: unknown): boolean {
  return value === true || value === 1 || value === 1n;
}

/** The texts `valuesRows` has made: a batch's statement is the same for every batch of its size. */
const madeRows = new Map<string, string>();
const maxMadeRows = 4096;

/**
 * `($1, $2, …), ($6, …)`: the rows of a multi-row VALUES, `width` placeholders each, numbered
 * from `first`. `cast` gives column types where the engine cannot infer them (PostgreSQL types
 * a VALUES column from its first row), in the CAST syntax both engines share.
 */
export function valuesRows(
  count: number,
  width: number,
  first = 1,
  cast?: readonly string[],
): string {
  const key = `${count} ${width} ${first} ${cast?.join() ?? ""}`;
  let text = madeRows.get(key);
  if (text === undefined) {
    text = Array.from({ length: count }, (_, row) => {
      const cells = Array.from({ length: width }, (_, column) => {
        const placeholder = `$${first + row * width + column}`;
        const type = cast?.[column];
        return type === undefined ? placeholder : `CAST(${placeholder} AS ${type})`;
      });
      return `(${cells.join(", ")})`;
    }).join(", ");
    if (madeRows.size >= maxMadeRows) madeRows.clear();
    madeRows.set(key, text);
  }
  return text;
}
