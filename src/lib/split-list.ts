/** A comma-separated list (a flag, an environment variable): trimmed, without empty entries. */
export function splitList(csv: string): string[] {
  return csv
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
