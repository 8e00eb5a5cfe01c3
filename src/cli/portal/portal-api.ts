import { z } from "zod";
import { isoTime } from "../../contract/common.ts";
import { workspaceItemPath } from "../workspaces/workspace-api.ts";

/**
 * The portal routes of the platform API (CONTRACT.md "Platform API"): a workspace's one-time
 * portal links, and ending its portal sessions.
 *
 * The answers' schemas are the contract's table, written here because the contract module of
 * the portal (src/contract/portal.ts, branch `portal`) had not landed when these commands
 * were: once it has, import `portalLinkSchema` and `portalSessionsEndedSchema` from it and
 * delete these two.
 */
export const portalLinkSchema = z.object({ url: z.string(), expires_at: isoTime });
export const portalSessionsEndedSchema = z.object({ ended: z.int().min(0) });

export const PORTAL_ROLES = ["viewer", "member"] as const;

export function portalLinksPath(workspace: string, command: string): string {
  return `${workspaceItemPath(workspace, command)}/portal-links`;
}

export function portalSessionsPath(workspace: string, command: string): string {
  return `${workspaceItemPath(workspace, command)}/portal-sessions`;
}
