import { readFile } from "node:fs/promises";

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat. */
export const ticksPerSecond = 100;

/** Percentile of a sample (nearest rank); NaN for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The value after `--name` on the command line, if given. */
export function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

/** Progress for a person, on stderr, so stdout keeps the table alone. */
export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** Runs `task` for each of `count` items with at most `concurrency` at once. */
export async function pooled(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const index = next;
      next += 1;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** CPU time (user + system) in ms of a process or thread, from its /proc `stat` file. */
export async function cpuMs(statPath: string): Promise<number> {
  const fields = (await readFile(statPath, "utf8")).split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}
