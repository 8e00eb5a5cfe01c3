import { AppError } from "../../errors.ts";
import { DEFAULT_API_URL, parseApiUrl } from "../client/api-url.ts";
import { createSession, revokeSession, whoAmI } from "../client/auth-api.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { isInteractive, readFirstLine, TerminalDialog } from "../prompt.ts";
import { usageError } from "../usage.ts";
import {
  readSavedCredentials,
  saveCredentials,
  type SavedCredentials,
} from "./credentials-file.ts";
import {
  defaultWorkspaceNotes,
  describeWorkspaces,
  ENV_KEY_OVERRIDES,
  unreachableWorkspace,
} from "./saved-summary.ts";

const COMMAND = "auth login";

export interface LoginOptions extends GlobalOptions {
  /** Read an API key from standard input instead of signing in with a password. */
  readonly withToken?: boolean;
  readonly email?: string;
  /** Read the password from standard input (needs --email). */
  readonly passwordStdin?: boolean;
  /** The API to sign in to; else asked on a terminal, with SERVICE_API_URL as the default. */
  readonly apiUrl?: string;
}

function cancelled(): AppError {
  return new AppError("cancelled", "Sign-in cancelled; nothing was saved.");
}

/** A required line from standard input, or a usage error naming the option that wanted it. */
async function lineFromStdin(io: CliIo, option: string, what: string): Promise<string> {
  const line = (await readFirstLine(io))?.trim() ?? "";
  if (line === "")
    throw usageError(COMMAND, `${option}: standard input is empty; it must hold ${what}.`);
  return line;
}

/** The e-mail address, password and API asked for on the terminal (what no flag gave). */
async function askOnTerminal(
  io: CliIo,
  options: LoginOptions,
  defaultUrl: string,
): Promise<{ apiUrl: string; email: string; password: string }> {
  const dialog = new TerminalDialog(io);
  try {
    const apiUrl = options.apiUrl ?? (await dialog.ask(`API URL [${defaultUrl}]: `));
    if (apiUrl === null) throw cancelled();
    const email = options.email ?? (await dialog.ask("E-mail: "));
    if (email === null) throw cancelled();
    const password = await dialog.askSecret("Password: ");
    if (password === null) throw cancelled();
    return {
      apiUrl: apiUrl.trim() === "" ? defaultUrl : apiUrl.trim(),
      email: email.trim(),
      password,
    };
  } finally {
    dialog.close();
  }
}

/** Signs in with an e-mail address and password: the server issues a session token. */
async function signInWithPassword(
  io: CliIo,
  options: LoginOptions,
  defaultUrl: string,
  now: Date,
): Promise<SavedCredentials> {
  let answers: { apiUrl: string; email: string; password: string };
  if (options.passwordStdin === true) {
    const password = await lineFromStdin(io, "--password-stdin", "the password");
    answers = { apiUrl: defaultUrl, email: options.email ?? "", password };
  } else if (isInteractive(io)) {
    answers = await askOnTerminal(io, options, defaultUrl);
  } else {
    throw new AppError("terminal_required");
  }
  const base = parseApiUrl(answers.apiUrl, "The API URL");
  const signedIn = await createSession(base, { email: answers.email, password: answers.password });
  return {
    api_url: base.href,
    kind: "session",
    token: signedIn.token,
    user: signedIn.user,
    workspaces: signedIn.workspaces,
    expires_at: signedIn.expires_at,
    saved_at: now.toISOString(),
    default_workspace: null,
  };
}

/** Saves an API key (or session token) read from standard input, once the API accepts it. */
async function saveGivenToken(io: CliIo, defaultUrl: string, now: Date): Promise<SavedCredentials> {
  const token = await lineFromStdin(io, "--with-token", "an API key");
  const base = parseApiUrl(defaultUrl, "The API URL");
  const who = await whoAmI(base, token);
  if (who.kind === "portal") {
    // A portal session is a customer's, short and bound to a page (decision 43): never saved.
    throw new AppError(
      "unauthenticated",
      "That is a customer portal session's token, which works in the portal page only. Save an API key, or sign in with an e-mail address.",
    );
  }
  return {
    api_url: base.href,
    kind: who.kind,
    token,
    user: who.user,
    workspaces: who.workspaces,
    expires_at: who.kind === "session" ? who.expires_at : null,
    saved_at: now.toISOString(),
    default_workspace: null,
  };
}

/**
 * The session the new credentials replace is revoked, so that signing in again leaves no
 * forgotten token valid. Best effort: the new credentials are already saved, and the old
 * session expires by itself anyway.
 */
async function revokeReplaced(previous: SavedCredentials | null, next: SavedCredentials) {
  if (previous?.kind !== "session" || previous.token === next.token) return;
  await revokeSession(parseApiUrl(previous.api_url), previous.token).catch(() => undefined);
}

/**
 * The default workspace `--workspace` chooses at sign-in: one the credentials reach. Checked
 * before anything is saved, so a mistyped id saves nothing.
 */
function chosenDefault(workspace: string | undefined, saved: SavedCredentials): string | null {
  if (workspace === undefined) return null;
  const id = workspace.trim();
  if (!saved.workspaces.some((reached) => reached.id === id)) {
    throw usageError(COMMAND, unreachableWorkspace(id, saved.workspaces));
  }
  return id;
}

export async function login(options: LoginOptions, io: CliIo): Promise<CommandResult> {
  if (
    options.withToken === true &&
    (options.email !== undefined || options.passwordStdin === true)
  ) {
    throw usageError(
      COMMAND,
      "--with-token reads an API key; it cannot be combined with --email or --password-stdin.",
    );
  }
  if (options.passwordStdin === true && options.email === undefined) {
    throw usageError(COMMAND, "--password-stdin needs --email <address>.");
  }
  const fromEnvironment = io.env.SERVICE_API_URL?.trim() ?? "";
  const defaultUrl = options.apiUrl ?? (fromEnvironment === "" ? DEFAULT_API_URL : fromEnvironment);
  const now = new Date();
  const previous = await readSavedCredentials(io.env).catch(() => null);
  const signedIn =
    options.withToken === true
      ? await saveGivenToken(io, defaultUrl, now)
      : await signInWithPassword(io, options, defaultUrl, now);
  const chosen = chosenDefault(options.workspace, signedIn);
  const saved = { ...signedIn, default_workspace: chosen };
  const path = await saveCredentials(io.env, saved);
  await revokeReplaced(previous?.saved ?? null, saved);
  const who = saved.user?.email ?? "an API key";
  const notes = [
    `Signed in to ${new URL(saved.api_url).origin} as ${who}.`,
    ...(saved.workspaces.length > 0
      ? ["Workspaces:", ...describeWorkspaces(saved.workspaces)]
      : []),
    ...defaultWorkspaceNotes(saved),
    `Credentials saved to ${path} (mode 0600).`,
    ...((io.env.SERVICE_API_KEY?.trim() ?? "") === "" ? [] : [ENV_KEY_OVERRIDES]),
  ];
  return {
    data: {
      api_url: saved.api_url,
      kind: saved.kind,
      user: saved.user,
      workspaces: saved.workspaces,
      expires_at: saved.expires_at,
      default_workspace: saved.default_workspace,
      credentials_file: path,
    },
    human: null,
    notes,
  };
}
