import type { Stats } from "node:fs";
import { lstat, mkdir, readlink, rmdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { AppError } from "../errors.ts";
import { accessProblem, ownerProblem } from "../lib/file-permissions.ts";
import { isPostgresUrl } from "../store/database-url.ts";
import { databaseLocation, type ServerConfig } from "./server-config.ts";

/**
 * Checks what this process keeps on the machine before it opens any of it (decision 27): the
 * data directory, when it is used (for SQLite's default database, or for the generated
 * encryption key when the process needs a key and none is configured), and a SQLite
 * database's files. An operator command on PostgreSQL uses neither, and touches nothing.
 * Returns the first directory it created, if it created the data directory (else null): a
 * process that then refuses to start removes what it made (`removeCreatedDataDir`).
 */
export async function checkLocalFiles(
  config: ServerConfig,
  needs: { readonly encryptionKey: boolean },
): Promise<string | null> {
  const keyInDataDir = needs.encryptionKey && config.encryptionKey === undefined;
  const created =
    config.database === undefined || keyInDataDir ? await openDataDir(config.dataDir) : null;
  const location = databaseLocation(config);
  if (!isPostgresUrl(location)) await checkDatabaseFiles(location);
  return created;
}

/**
 * Removes the data directory this process created (`createdFrom`, from `checkLocalFiles`) and
 * the directories above it it created too, as long as each is empty: never a file.
 */
export async function removeCreatedDataDir(dataDir: string, createdFrom: string): Promise<void> {
  const top = resolve(createdFrom);
  for (let path = resolve(dataDir); ; path = dirname(path)) {
    try {
      await rmdir(path);
    } catch {
      return; // not empty (or gone): what is left is not only ours
    }
    if (path === top || dirname(path) === path) return;
  }
}

/**
 * The data directory, created with mode 0700 when missing, else taken as it is only if it is a
 * directory (a symlink is not followed), this user's, and writable by no one else. Others may
 * read it (0755): they see names, while the files in it keep them out by their own modes.
 * Returns the first directory it created, or null when the data directory was there.
 */
export async function openDataDir(path: string): Promise<string | null> {
  let stats: Stats;
  let createdFrom: string | null = null;
  try {
    const existing = await lstatIfAny(path);
    // The mode is narrowed by the umask, never widened: 0700 at most.
    if (existing === null)
      createdFrom = (await mkdir(path, { recursive: true, mode: 0o700 })) ?? null;
    stats = existing ?? (await lstat(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new AppError(
      "invalid_config",
      `The data directory ${path} cannot be created or read (${code}): set SVC_DATA_DIR (or --data-dir) to a directory this user owns or may create.`,
      { cause: error },
    );
  }
  // One problem at a time, in the order they are fixed: what the path is, whose it is (no one
  // else can chmod it), then who else may write to it.
  const problem =
    (await kindProblem(path, stats)) ??
    ownerProblem(path, stats, "-R ") ??
    accessProblem(path, stats, 0o022, "700");
  if (problem !== null) {
    throw new AppError("insecure_data_dir", `The data directory ${path} ${problem}`);
  }
  return createdFrom;
}

async function lstatIfAny(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * A symlink is refused rather than resolved: its target could change between this check and
 * the opening of the files in it, and naming the target in the setting costs the operator
 * nothing.
 */
async function kindProblem(path: string, stats: Stats): Promise<string | null> {
  if (stats.isSymbolicLink()) {
    const target = resolve(dirname(path), await readlink(path));
    return `is a symlink to ${target}, which svc does not follow: set SVC_DATA_DIR (or --data-dir) to ${target} itself.`;
  }
  if (stats.isDirectory()) return null;
  return "is not a directory: set SVC_DATA_DIR (or --data-dir) to a directory.";
}

/**
 * SQLite's files: the database and its WAL and shared memory, which SQLite creates with the
 * database file's mode (0600 when svc made it). Its group may have access (a backup group, say),
 * others may not. Followed through a symlink, as SQLite follows it.
 */
async function checkDatabaseFiles(location: string): Promise<void> {
  for (const path of [location, `${location}-wal`, `${location}-shm`]) {
    let stats: Stats;
    try {
      stats = await stat(path);
    } catch {
      // Missing (SQLite creates it) or unreadable: then opening it reports that, as it did.
      continue;
    }
    const problem = accessProblem(path, stats, 0o007, "o-rwx");
    if (problem !== null) {
      throw new AppError("insecure_database_file", `The database file ${path} ${problem}`);
    }
  }
}
