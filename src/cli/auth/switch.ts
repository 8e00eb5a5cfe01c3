import { AppError } from "../../errors.ts";
import { resolveApiUrl } from "../client/api-url.ts";
import { whoAmI } from "../client/auth-api.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { credentialsPath, readSavedCredentials, saveCredentials } from "./credentials-file.ts";
import {
  defaultWorkspaceNotes,
  describeWorkspaces,
  unreachableWorkspace,
} from "./saved-summary.ts";

const COMMAND = "auth switch";

/**
 * Chooses the default workspace of the saved credentials: the one commands act on when neither
 * `--workspace` nor SERVICE_WORKSPACE_ID names one. It must be a workspace they reach: the
 * list saved at sign-in, else (a workspace made since) the API's answer now, which is saved too.
 */
export async function switchWorkspace(options: GlobalOptions, io: CliIo): Promise<CommandResult> {
  const found = await readSavedCredentials(io.env);
  if (found === null) {
    throw new AppError(
      "no_credentials",
      `Not signed in: there are no saved credentials (${credentialsPath(io.env)}) to keep a default workspace with. Sign in with \`svc auth login\`.`,
    );
  }
  const id = options.workspace?.trim() ?? "";
  if (id === "") {
    throw usageError(
      COMMAND,
      [
        "--workspace <id> is required. Workspaces:",
        ...describeWorkspaces(found.saved.workspaces),
      ].join("\n"),
    );
  }
  let saved = found.saved;
  if (!saved.workspaces.some((workspace) => workspace.id === id)) {
    const who = await whoAmI(resolveApiUrl(io.env, saved.api_url), saved.token);
    saved = { ...saved, workspaces: who.workspaces };
    if (!saved.workspaces.some((workspace) => workspace.id === id)) {
      throw usageError(COMMAND, unreachableWorkspace(id, saved.workspaces));
    }
  }
  saved = { ...saved, default_workspace: id };
  const path = await saveCredentials(io.env, saved);
  const overridden = (io.env.SERVICE_WORKSPACE_ID?.trim() ?? "") !== "";
  const apiKeyInUse = (io.env.SERVICE_API_KEY?.trim() ?? "") !== "";
  return {
    data: { default_workspace: id, credentials_file: path },
    human: null,
    notes: [
      ...defaultWorkspaceNotes(saved),
      ...(overridden
        ? ["SERVICE_WORKSPACE_ID is set: it takes precedence until you unset it."]
        : []),
      ...(apiKeyInUse
        ? ["SERVICE_API_KEY is set: svc uses it, and not the saved credentials or their default."]
        : []),
    ],
  };
}
