import { membersOf } from "../../contract/common.ts";
import { apiKeySchema } from "../../contract/workspaces.ts";
import { pathSegment } from "../client/api-paths.ts";
import { workspaceItemPath } from "../workspaces/workspace-api.ts";

/**
 * A workspace's API keys over the platform API (decision 42), as the command line reads them:
 * the contract's schemas. A token is in the mint's answer alone, and goes to a file only.
 */

/** The members of a key as listed: never a token. */
export const KEY_FIELDS = membersOf(apiKeySchema);

export { deletionSchema } from "../../contract/destinations.ts";
export { apiKeySchema, mintedApiKeySchema } from "../../contract/workspaces.ts";

export function keysPath(workspace: string, command: string): string {
  return `${workspaceItemPath(workspace, command)}/api-keys`;
}

export function keyPath(workspace: string, id: string, command: string): string {
  return `${keysPath(workspace, command)}/${pathSegment(id, "key id", command)}`;
}
