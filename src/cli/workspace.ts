import { AppError } from "../errors.ts";

/** The workspace named on the command line or in the environment: `--workspace`, else SERVICE_WORKSPACE_ID. */
export function chosenWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv): string | null {
  const workspace = (flag ?? env.SERVICE_WORKSPACE_ID ?? "").trim();
  return workspace === "" ? null : workspace;
}

/** The workspace a command acts on, which must be named (operator commands). */
export function resolveWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const workspace = chosenWorkspace(flag, env);
  if (workspace === null) throw new AppError("no_workspace");
  return workspace;
}

/**
 * The workspace of an API command: `--workspace`, else SERVICE_WORKSPACE_ID, else the default
 * workspace saved with the credentials in use (`svc auth switch`), else the one workspace the
 * credentials reach (asked of `reachable` only when nothing was named). Naming a workspace adds
 * no permission: the server checks the credentials' access to it.
 */
export async function resolveClientWorkspace(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  savedDefault: string | null,
  reachable: () => Promise<readonly { id: string }[]>,
): Promise<string> {
  const named = chosenWorkspace(flag, env) ?? savedDefault;
  if (named !== null) return named;
  const workspaces = await reachable();
  const [only] = workspaces;
  if (workspaces.length === 1 && only !== undefined) return only.id;
  throw new AppError(
    "no_workspace",
    workspaces.length === 0
      ? "No workspace selected, and these credentials reach none. Pass --workspace <id> or set SERVICE_WORKSPACE_ID."
      : `No workspace selected, and these credentials reach ${workspaces.length} (${workspaces.map((workspace) => workspace.id).join(", ")}). Pass --workspace <id>, set SERVICE_WORKSPACE_ID, or choose a default with \`svc auth switch --workspace <id>\`.`,
  );
}
