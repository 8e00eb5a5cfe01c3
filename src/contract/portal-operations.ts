import { workspaceParams } from "./common.ts";
import type { Operation } from "./operations.ts";
import {
  createPortalLinkBody,
  openedPortalSessionSchema,
  openPortalSessionBody,
  portalLinkSchema,
  portalSessionsEndedSchema,
} from "./portal.ts";

/**
 * The customer portal's operations (CONTRACT.md "Platform API", decision 43): making links and
 * ending sessions, for an operator key with `portal:write`; opening a session with a link's
 * token, for anyone who holds one. Part of `operations`.
 */
export const portalOperations = {
  createPortalLink: {
    method: "post",
    path: "/v1/workspaces/{workspace}/portal-links",
    tag: "Portal",
    summary: "Make a portal link",
    description:
      "A one-time URL to the workspace's customer portal (`/ui/portal`), with the token in its fragment: hand it to the customer's browser (a redirect, or an iframe's `src`). It dies once opened, after `expires_in` seconds (portalLinkTtl, 5 minutes, by default; at most an hour), or when the workspace's portal sessions are ended. The session it opens reaches this workspace alone, with the role's scopes, for portalSessionTtl.",
    access: "portal:write",
    params: workspaceParams,
    body: createPortalLinkBody,
    success: { status: 201, description: "The link.", schema: portalLinkSchema },
    errors: ["not_found"],
  },
  endPortalSessions: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/portal-sessions",
    tag: "Portal",
    summary: "End the workspace's portal sessions",
    description:
      "Ends at once every running portal session of the workspace (its next request is 401) and kills its links not yet opened; `ended` counts both.",
    access: "portal:write",
    params: workspaceParams,
    success: {
      status: 200,
      description: "How many were ended.",
      schema: portalSessionsEndedSchema,
    },
    errors: ["not_found"],
  },
  openPortalSession: {
    method: "post",
    path: "/v1/auth/portal-sessions",
    tag: "Portal",
    summary: "Open a portal session",
    description:
      "What the customer portal's page does with a portal link (decision 43): the one-time token from the link's fragment, in the body (never in a URL), for a session of the link's workspace and role. The session's token is answered, to be held in memory and sent as `Authorization: Bearer`; it reaches that one workspace alone, until portalSessionTtl has passed or the session is ended. A link opens one session: any later try, or one after the link expired or was revoked, is 401 `portal_link_invalid`.",
    access: "none",
    body: openPortalSessionBody,
    success: {
      status: 201,
      description: "The portal session.",
      schema: openedPortalSessionSchema,
    },
    errors: ["portal_link_invalid"],
  },
} as const satisfies Record<string, Operation>;
