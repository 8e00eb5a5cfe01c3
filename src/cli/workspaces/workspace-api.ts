import { membersOf } from "../../contract/common.ts";
import { workspaceSchema } from "../../contract/workspaces.ts";
import { pathSegment } from "../client/api-paths.ts";

/**
 * The platform API's workspaces as the command line reads them (decision 42): the contract's
 * schemas (`src/contract/workspaces.ts`), and the paths of the routes.
 */

/** The members of a workspace, as the contract gives them. */
export const WORKSPACE_FIELDS = membersOf(workspaceSchema);

export { deletionSchema } from "../../contract/destinations.ts";
export { workspacePageSchema, workspaceSchema } from "../../contract/workspaces.ts";

export const WORKSPACES_PATH = "v1/workspaces";

export function workspaceItemPath(id: string, command: string): string {
  return `${WORKSPACES_PATH}/${pathSegment(id, "workspace id", command)}`;
}
