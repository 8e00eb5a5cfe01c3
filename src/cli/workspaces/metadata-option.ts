import { usageError } from "../usage.ts";

/**
 * `--metadata key=value`, repeated: commander gathers each use into a list (a variadic option
 * would swallow the positional id that may follow it).
 */
export function collectPairs(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * The metadata object the pairs name: the name is what comes before the first `=`, the value
 * all after it (it may hold `=`, or be empty). A name given twice is refused rather than one
 * of its values picked. The API checks the bounds (names, values, count).
 */
export function metadataOf(pairs: readonly string[], command: string): Record<string, string> {
  // A Map, then fromEntries: a name such as __proto__ stays a member, not a prototype.
  const metadata = new Map<string, string>();
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    const name = at < 0 ? "" : pair.slice(0, at).trim();
    if (name === "") {
      throw usageError(
        command,
        `--metadata takes key=value (such as plan=pro), not ${JSON.stringify(pair)}.`,
      );
    }
    if (metadata.has(name)) {
      throw usageError(command, `--metadata names ${JSON.stringify(name)} twice.`);
    }
    metadata.set(name, pair.slice(at + 1));
  }
  return Object.fromEntries(metadata);
}
