import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import { AppError } from "../../errors.ts";
import { ROLES, SCOPES } from "../../interfaces.ts";

/**
 * What `svc auth login` saves: the token (a session's, or an API key given with
 * `--with-token`), the API it is for, and what the server said it reaches. Never a password.
 */
const savedCredentialsSchema = z.object({
  api_url: z.url(),
  kind: z.enum(["session", "api_key"]),
  token: z.string().min(1),
  user: z.object({ id: z.string(), email: z.string() }).nullable(),
  workspaces: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      role: z.enum(ROLES).nullable(),
      scopes: z.array(z.enum(SCOPES)),
    }),
  ),
  expires_at: z.string().nullable(),
  saved_at: z.string(),
  /**
   * The workspace commands act on when neither `--workspace` nor SERVICE_WORKSPACE_ID names
   * one: chosen with `svc auth login --workspace` or `svc auth switch --workspace`. Absent from
   * files saved before it existed, and null when none was chosen.
   */
  default_workspace: z.string().nullable().default(null),
});
export type SavedCredentials = z.infer<typeof savedCredentialsSchema>;
export type SavedWorkspace = SavedCredentials["workspaces"][number];

/** `$XDG_CONFIG_HOME/svc/credentials.json`, else `~/.config/svc/credentials.json`. */
export function credentialsPath(env: NodeJS.ProcessEnv): string {
  const xdgConfigHome = env.XDG_CONFIG_HOME;
  // The XDG specification ignores a relative value.
  const base =
    xdgConfigHome !== undefined && isAbsolute(xdgConfigHome)
      ? xdgConfigHome
      : join(env.HOME ?? homedir(), ".config");
  return join(base, "svc", "credentials.json");
}

/** The saved credentials, or null when there are none. A damaged file is an error, not none. */
export async function readSavedCredentials(
  env: NodeJS.ProcessEnv,
): Promise<{ path: string; saved: SavedCredentials } | null> {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw invalidFile(path, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalidFile(path, error);
  }
  const result = savedCredentialsSchema.safeParse(parsed);
  if (!result.success) throw invalidFile(path, result.error);
  return { path, saved: result.data };
}

function invalidFile(path: string, cause: unknown): AppError {
  return new AppError(
    "invalid_credentials_file",
    `The saved credentials file ${path} is not valid. Sign in again with \`svc auth login\`, or remove it with \`svc auth logout\`.`,
    { cause },
  );
}

/**
 * Saves atomically: a new temporary file (mode 0600 from its creation) in the same directory
 * is written, flushed to disk and renamed over the old one, so a reader sees the old file or
 * the new, never a part, and the token is never readable by others for a moment. The
 * directory is made (or narrowed to) 0700: its owner's alone.
 */
export async function saveCredentials(
  env: NodeJS.ProcessEnv,
  saved: SavedCredentials,
): Promise<string> {
  const path = credentialsPath(env);
  const directory = dirname(path);
  const temporary = join(directory, `.credentials-${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    await chmod(directory, 0o700);
    const handle = await open(temporary, "wx", 0o600);
    try {
      // The mode given to open() is narrowed by the umask, never widened; make it exact.
      await handle.chmod(0o600);
      await handle.writeFile(`${JSON.stringify(saved, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new AppError(
      "credentials_not_saved",
      `The credentials could not be saved to ${path} (${code}).`,
      { cause: error },
    );
  }
  return path;
}

/** Returns false when there was nothing to remove. */
export async function removeSavedCredentials(env: NodeJS.ProcessEnv): Promise<boolean> {
  const path = credentialsPath(env);
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new AppError(
      "credentials_not_saved",
      `The saved credentials ${path} could not be removed (${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
      { cause: error },
    );
  }
}
