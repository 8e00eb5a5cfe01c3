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
