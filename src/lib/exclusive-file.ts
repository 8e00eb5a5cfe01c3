import { constants } from "node:fs";
import { access, lstat, open, unlink, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { AppError } from "../errors.ts";

/**
 * A file created for a secret: new (O_EXCL, so an existing file or a symlink at the path is
 * never written through), readable and writable only by its owner. Create it before the
 * operation that produces the secret, so that a bad path fails before anything happens;
 * then `write` the secret, or `discard` the empty file if the operation failed.
 */
export class ExclusiveFile {
  readonly path: string;
  readonly #handle: FileHandle;
  #closed = false;

  private constructor(path: string, handle: FileHandle) {
    this.path = path;
    this.#handle = handle;
  }

  static async create(path: string): Promise<ExclusiveFile> {
    const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW;
    let handle: FileHandle;
    try {
      handle = await open(path, flags, 0o600);
    } catch (error) {
      throw toOutputError(path, error);
    }
    // The mode given to open() is narrowed by the umask, never widened; make it exact.
    await handle.chmod(0o600);
    return new ExclusiveFile(path, handle);
  }

  /**
   * Checks, creating nothing, that `create` would accept the path: nothing is there (not even
   * a dangling symlink) and its directory exists and is writable. For previews (`--dry-run`);
   * `create` remains the check that counts, since the path can change in between.
   */
  static async check(path: string): Promise<void> {
    let existing: unknown = null;
    try {
      await lstat(path);
      existing = Object.assign(new Error(`EEXIST: file already exists, '${path}'`), {
        code: "EEXIST",
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw toOutputError(path, error);
    }
    if (existing !== null) throw toOutputError(path, existing);
    try {
      await access(dirname(path), constants.W_OK);
    } catch (error) {
      throw toOutputError(path, error);
    }
  }

  /** Writes the whole content, flushes it to disk and closes the file. */
  async write(content: string): Promise<void> {
    try {
      await this.#handle.writeFile(content, "utf8");
      await this.#handle.sync();
    } finally {
      await this.#close();
    }
  }

  /** Flushes to disk what another writer put in the file by its path (SQLite), and closes it. */
  async keep(): Promise<void> {
    try {
      await this.#handle.sync();
    } finally {
      await this.#close();
    }
  }

  /** Removes the file: the operation it was made for did not happen. */
  async discard(): Promise<void> {
    await this.#close();
    await unlink(this.path);
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}

function toOutputError(path: string, error: unknown): AppError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EEXIST") {
    return new AppError(
      "output_exists",
      `${path} already exists; it is never overwritten. Choose a new path.`,
      { param: "output", cause: error },
    );
  }
  return new AppError(
    "output_not_writable",
    `${path} cannot be created (${code ?? "unknown error"}): its directory must exist and be writable.`,
    { param: "output", cause: error },
  );
}
