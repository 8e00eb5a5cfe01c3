import { AppError } from "../../errors.ts";
import { resolveApiUrl } from "../client/api-url.ts";
import { whoAmI } from "../client/auth-api.ts";
import { resolveCredentials } from "../client/credentials.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { credentialsPath, readSavedCredentials } from "./credentials-file.ts";
import { describeWorkspaces, ENV_KEY_OVERRIDES } from "./saved-summary.ts";
import { chosenWorkspace } from "../workspace.ts";

/**
 * Who svc acts as, and why: the credentials in use (SERVICE_API_KEY, else those saved by
 * `svc auth login`), checked with the API, which says whom they belong to and which
 * workspaces and scopes they reach.
 */
export async function status(io: CliIo): Promise<CommandResult> {
  const path = credentialsPath(io.env);
  const found = await readSavedCredentials(io.env);
  const envKey = (io.env.SERVICE_API_KEY?.trim() ?? "") !== "";
  if (!envKey && found === null) {
    throw new AppError(
      "no_credentials",
      `Not signed in: SERVICE_API_KEY is not set and there are no saved credentials (${path}). Sign in with \`svc auth login\`.`,
    );
  }
  const credentials = await resolveCredentials(io.env);
  const base = resolveApiUrl(io.env, credentials.saved?.api_url);
  const who = await whoAmI(base, credentials.token);
  const source = envKey ? "SERVICE_API_KEY" : "saved";
  const keyId = who.kind === "api_key" ? who.key_id : undefined;
  const expiresAt = who.kind === "session" ? who.expires_at : null;
  const data = {
    api_url: base.href,
    kind: who.kind,
    user: who.user,
    ...(keyId === undefined ? {} : { key_id: keyId }),
    expires_at: expiresAt,
    workspaces: who.workspaces,
    // The saved default applies only when the saved credentials are the ones in use.
    default_workspace: envKey ? null : (found?.saved.default_workspace ?? null),
    credentials_source: source,
    credentials_file: found === null ? null : path,
    overridden_by_service_api_key: envKey && found !== null,
  };
  const identity = who.user === null ? `an API key (${keyId ?? "unknown id"})` : who.user.email;
  const lines = [
    `Signed in to ${base.origin} as ${identity}${expiresAt === null ? "" : `; the session expires at ${expiresAt}`}.`,
    `Credentials: ${envKey ? "SERVICE_API_KEY" : path}.`,
    ...(who.workspaces.length > 0
      ? ["Workspaces:", ...describeWorkspaces(who.workspaces)]
      : ["Workspaces: none."]),
  ];
  const chosen = chosenWorkspace(undefined, io.env);
  if (chosen !== null) lines.push(`Workspace: ${chosen} (SERVICE_WORKSPACE_ID).`);
  if (data.default_workspace !== null) {
    lines.push(
      `Default workspace: ${data.default_workspace}${chosen === null ? "" : ", overridden by SERVICE_WORKSPACE_ID"}.`,
    );
  }
  if (envKey && found !== null) {
    lines.push(`Saved credentials in ${path} are not in use: ${ENV_KEY_OVERRIDES}`);
  }
  if (!envKey && (io.env.SERVICE_API_URL?.trim() ?? "") !== "" && found !== null) {
    if (new URL(found.saved.api_url).href !== base.href) {
      lines.push(`SERVICE_API_URL overrides the saved API URL ${found.saved.api_url}.`);
    }
  }
  return { data, human: lines.join("\n") };
}
