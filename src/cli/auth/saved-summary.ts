import type { SavedWorkspace } from "./credentials-file.ts";

/** `ws_1 (Default): owner` — one line per workspace, for people. */
export function describeWorkspaces(workspaces: readonly SavedWorkspace[]): string[] {
  return workspaces.map(
    (workspace) =>
      `  ${workspace.id} (${workspace.name}): ${workspace.role ?? "API key"}, ${workspace.scopes.join(", ")}`,
  );
}

/** What is said when SERVICE_API_KEY is set beside saved credentials. */
export const ENV_KEY_OVERRIDES =
  "SERVICE_API_KEY is set, and it takes precedence over the saved credentials; unset it to use them.";
