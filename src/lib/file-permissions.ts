import type { Stats } from "node:fs";

/**
 * Owners and modes of the files svc keeps its secrets in, read as an operator would, for
 * messages that end in the command that fixes them. Each function returns the rest of a
 * sentence that begins with the path's name, or null when there is nothing to fix.
 *
 * POSIX only: on Windows Node reports made-up modes and uid 0, and the operator's ACLs decide,
 * so nothing is checked there.
 */

/** The user svc runs as, whose files it may trust; undefined on Windows. */
function effectiveUid(): number | undefined {
  return process.geteuid?.();
}

const accessWords: readonly [number, string][] = [
  [4, "readable"],
  [2, "writable"],
  [1, "executable"],
];

/** "readable and writable" for one class of users' permission bits (6, here). */
function accessText(bits: number): string {
  return accessWords
    .filter(([bit]) => (bits & bit) !== 0)
    .map(([, word]) => word)
    .join(" and ");
}

/** A mode as chmod writes it: 0755, 2700. */
export function modeText(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

/**
 * What the mode lets the group and others do of `forbidden` (group and other bits, e.g. 0o022
 * for writing): "is writable by its group and others (mode 0777). Run: chmod 700 /x".
 */
export function accessProblem(
  path: string,
  stats: Stats,
  forbidden: number,
  chmodMode: string,
): string | null {
  if (effectiveUid() === undefined) return null;
  const group = (stats.mode & forbidden & 0o070) >> 3;
  const others = stats.mode & forbidden & 0o007;
  if (group === 0 && others === 0) return null;
  const who =
    group === others
      ? `${accessText(group)} by its group and others`
      : [
          ...(group === 0 ? [] : [`${accessText(group)} by its group`]),
          ...(others === 0 ? [] : [`${accessText(others)} by others`]),
        ].join(" and ");
  return `is ${who} (mode ${modeText(stats.mode)}). Run: chmod ${chmodMode} ${path}`;
}

/**
 * Whose the path is, when it is not this user's: a file of another user's may have been put
 * there, or may be changed, by them. `chownFlags` is "-R " for a directory.
 */
export function ownerProblem(path: string, stats: Stats, chownFlags = ""): string | null {
  const uid = effectiveUid();
  if (uid === undefined || stats.uid === uid) return null;
  return `is owned by uid ${stats.uid}, not by this user (uid ${uid}): start svc as uid ${stats.uid}, or run: chown ${chownFlags}${uid} ${path}`;
}
