import { AppError } from "../errors.ts";

/**
 * The workspace a command acts on: `--workspace`, else SERVICE_WORKSPACE_ID. (The credential's
 * only workspace joins as the last fallback with `svc auth login`.)
 */
export function resolveWorkspace(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const workspace = (flag ?? env.SERVICE_WORKSPACE_ID ?? "").trim();
  if (workspace === "") throw new AppError("no_workspace");
  return workspace;
}
