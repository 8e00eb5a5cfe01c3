import type { SavedCredentials, SavedWorkspace } from "./credentials-file.ts";

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

/** Why a workspace cannot be the default: the credentials do not reach it. */
export function unreachableWorkspace(id: string, workspaces: readonly SavedWorkspace[]): string {
  const reached = workspaces.map((workspace) => workspace.id).join(", ");
  return `These credentials do not reach workspace ${id}; they reach ${reached === "" ? "none" : reached}.`;
}

/** What a person is told about the default workspace of saved credentials. */
export function defaultWorkspaceNotes(saved: SavedCredentials): string[] {
  if (saved.default_workspace !== null) {
    return [
      `Default workspace: ${saved.default_workspace} (--workspace and SERVICE_WORKSPACE_ID take precedence).`,
    ];
  }
  if (saved.workspaces.length > 1) {
    return [
      "No default workspace: choose one with `svc auth switch --workspace <id>`, or pass --workspace to each command.",
    ];
  }
  return [];
}
