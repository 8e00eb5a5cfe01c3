import { z } from "zod";
import { PORTAL_ROLES } from "../interfaces.ts";
import { workspaceAccessSchema } from "./auth.ts";
import { isoTime } from "./common.ts";

/**
 * The customer portal (CONTRACT.md "Platform API", decision 43): one-time links that a
 * platform's backend makes, the session a link opens, and ending them.
 */

/** The longest a link may stay unopened: an hour. */
export const MAX_PORTAL_LINK_SECONDS = 3600;

export const createPortalLinkBody = z
  .strictObject({
    role: z.enum(PORTAL_ROLES, { error: "role must be viewer or member" }).meta({
      description:
        "What the customer may do: `viewer` reads (webhooks:read, events:read); `member` also creates, changes and deletes destinations, retries and recovers deliveries (every webhooks and events scope).",
    }),
    expires_in: z
      .int({ error: `expires_in must be a whole number of seconds` })
      .min(1, { error: "expires_in must be at least 1 second" })
      .max(MAX_PORTAL_LINK_SECONDS, {
        error: `expires_in must be at most ${MAX_PORTAL_LINK_SECONDS} seconds (an hour)`,
      })
      .optional()
      .meta({
        description:
          "Seconds until the link dies unopened; default portalLinkTtl (5 minutes), at most 3600.",
        examples: [300],
      }),
  })
  .meta({ id: "CreatePortalLink" });

export const portalLinkSchema = z
  .object({
    url: z.string().meta({
      description:
        "Opens the portal (`/ui/portal`) with the one-time token in the fragment, which browsers never send to a server nor put in a Referer. Works once; hand it to the customer's browser and nowhere else. Theming parameters may be appended to the fragment (`&theme=dark&accent=%230b57d0&name=Acme`).",
      examples: ["https://webhooks.example.com/ui/portal#token=spl_…"],
    }),
    expires_at: isoTime.meta({ description: "When the link dies if it has not been opened." }),
  })
  .meta({ id: "PortalLink" });

export const portalSessionsEndedSchema = z
  .object({
    ended: z.int().min(0).meta({
      description:
        "How many ways into the workspace's portal were closed: its running portal sessions and its links not yet opened, together.",
    }),
  })
  .meta({ id: "PortalSessionsEnded" });

export const openPortalSessionBody = z
  .strictObject({
    token: z
      .string({ error: "token is required" })
      .min(1)
      .max(100)
      .meta({ description: "The one-time token from the link's fragment (`spl_…`)." }),
  })
  .meta({ id: "OpenPortalSession" });

export const openedPortalSessionSchema = z
  .object({
    token: z
      .string()
      .regex(/^svp_/) // a pattern: zod's startsWith() renders a non-standard format
      .meta({
        description:
          "The portal session's bearer token: send it as `Authorization: Bearer`. Keep it in memory; it reaches this workspace alone.",
      }),
    expires_at: isoTime.meta({ description: "When the session ends (portalSessionTtl)." }),
    workspace: workspaceAccessSchema,
  })
  .meta({ id: "PortalSessionOpened" });
