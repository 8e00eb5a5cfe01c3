import { workspaceItemPath } from "../workspaces/workspace-api.ts";

/**
 * The portal routes of the platform API (decision 43) as the command line reads them: the
 * contract's schemas (`src/contract/portal.ts`), and the paths of a workspace's portal links
 * and portal sessions.
 */

export {
  MAX_PORTAL_LINK_SECONDS,
  portalLinkSchema,
  portalSessionsEndedSchema,
} from "../../contract/portal.ts";
export { PORTAL_ROLES } from "../../interfaces.ts";

export function portalLinksPath(workspace: string, command: string): string {
  return `${workspaceItemPath(workspace, command)}/portal-links`;
}

export function portalSessionsPath(workspace: string, command: string): string {
  return `${workspaceItemPath(workspace, command)}/portal-sessions`;
}
