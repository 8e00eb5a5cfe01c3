import { chmod, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { AppError } from "../../errors.ts";
import { ROLES, SCOPES } from "../../interfaces.ts";
import { arrayOf, isString, nullable, objectOf, oneOf, optional } from "../client/answer-shape.ts";
import type { SavedCredentials } from "./credentials-file-schema.ts";

export type { SavedCredentials } from "./credentials-file-schema.ts";
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
  const saved = savedCredentialsOf(parsed);
  if (saved !== null) return { path, saved };
  // Refused by the guard: the schema decides, and its error is the cause reported.
  const { savedCredentialsSchema } = await import("./credentials-file-schema.ts");
  const result = savedCredentialsSchema.safeParse(parsed);
  if (!result.success) throw invalidFile(path, result.error);
  return { path, saved: result.data };
}

const isWorkspace = objectOf({
  id: isString,
  name: isString,
  role: nullable(oneOf(ROLES)),
  scopes: arrayOf(oneOf(SCOPES)),
});

const isSavedCredentials = objectOf({
  api_url: (value): value is string => isString(value) && URL.canParse(value.trim()),
  kind: oneOf(["session", "api_key"]),
  token: (value): value is string => isString(value) && value.length >= 1,
  user: nullable(objectOf({ id: isString, email: isString })),
  workspaces: arrayOf(isWorkspace),
  expires_at: nullable(isString),
  saved_at: isString,
  default_workspace: optional(nullable(isString)),
});

/**
 * The file's content as `savedCredentialsSchema` parses it, without loading zod; null when
 * the guard refuses it. As zod's `object` does, members the schema does not name are left
 * out, and `default_workspace` is null when absent; as its `url` does, `api_url` is trimmed
 * and loses any tab or line break.
 */
export function savedCredentialsOf(value: unknown): SavedCredentials | null {
  if (!isSavedCredentials(value)) return null;
  return {
    api_url: value.api_url.trim().replace(/[\t\n\r]/g, ""),
    kind: value.kind,
    token: value.token,
    user: value.user === null ? null : { id: value.user.id, email: value.user.email },
    workspaces: value.workspaces.map(({ id, name, role, scopes }) => ({ id, name, role, scopes })),
    expires_at: value.expires_at,
    saved_at: value.saved_at,
    default_workspace: value.default_workspace ?? null,
  };
}

function invalidFile(path: string, cause: unknown): AppError {
  return new AppError(
    "invalid_credentials_file",
    `The saved credentials file ${path} is not valid. Sign in again with \`svc auth login\`, or remove it with \`svc auth logout\`.`,
    { cause },
  );
}

/**
 * Six random bytes in hex. Web Crypto's, not node:crypto's: importing node:crypto here would
 * load it for every command that reads the file (decision 51).
 */
function temporarySuffix(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("hex");
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
  const temporary = join(directory, `.credentials-${temporarySuffix()}.tmp`);
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
