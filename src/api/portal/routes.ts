import type { FastifyInstance } from "fastify";
import { workspaceParams } from "../../contract/common.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { createPortalLinkBody, openPortalSessionBody } from "../../contract/portal.ts";
import { hashToken, newPortalSessionToken } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { ROLE_SCOPES } from "../../interfaces.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput } from "../parse-input.ts";
import { makePortalLink } from "./links.ts";

const { createPortalLink, endPortalSessions, openPortalSession } = operations;

/** An operator route's workspace must exist: 404 otherwise, as for any unknown id. */
async function existingWorkspace(dependencies: ApiDependencies, id: string): Promise<string> {
  if ((await dependencies.store.credentials.getWorkspace(id)) === null) {
    throw new AppError("not_found", `No workspace ${id}.`);
  }
  return id;
}

/**
 * The platform's side of the customer portal (decision 43), for an operator key with
 * `portal:write`: `POST …/portal-links` makes a one-time link, `DELETE …/portal-sessions`
 * closes every way into the workspace's portal.
 */
export function registerPortalLinkRoutes(
  app: FastifyInstance,
  dependencies: ApiDependencies,
): void {
  app.post(routePath(createPortalLink), accessConfig(createPortalLink), async (request, reply) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const input = parseInput(createPortalLinkBody, request.body);
    const link = await makePortalLink(request, dependencies, {
      workspaceId: await existingWorkspace(dependencies, workspace),
      role: input.role,
      ...(input.expires_in === undefined ? {} : { expiresInSeconds: input.expires_in }),
    });
    return reply.status(createPortalLink.success.status).send(
      successBody(createPortalLink, {
        url: link.url,
        expires_at: link.expiresAt.toISOString(),
      }),
    );
  });

  app.delete(routePath(endPortalSessions), accessConfig(endPortalSessions), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const ended = await dependencies.store.portal.revokeWorkspace(
      await existingWorkspace(dependencies, workspace),
    );
    return successBody(endPortalSessions, { ended: ended.sessions + ended.links });
  });
}

/**
 * `POST /v1/auth/portal-sessions`: the portal page trades a link's one-time token for a
 * session (decision 43). The token comes in the body, so it is in no URL, access log or
 * Referer; the link is spent by the same statement that makes the session, so two openings
 * of one link make one session. Only hashes are stored.
 */
export function registerPortalSessionRoute(
  app: FastifyInstance,
  dependencies: ApiDependencies,
): void {
  const { store, clock, portal } = dependencies;

  app.post(
    routePath(openPortalSession),
    accessConfig(openPortalSession),
    async (request, reply) => {
      const { token: linkToken } = parseInput(openPortalSessionBody, request.body);
      const token = newPortalSessionToken();
      const session = await store.portal.redeemLink({
        linkTokenHash: hashToken(linkToken),
        sessionTokenHash: hashToken(token),
        sessionExpiresAt: new Date(clock.now().getTime() + portal.sessionTtlMs),
      });
      if (session === null) throw new AppError("portal_link_invalid");
      const workspace = await store.credentials.getWorkspace(session.workspaceId);
      return reply.status(openPortalSession.success.status).send(
        successBody(openPortalSession, {
          token,
          expires_at: session.expiresAt.toISOString(),
          workspace: {
            id: session.workspaceId,
            name: workspace?.name ?? "",
            role: session.role,
            scopes: [...ROLE_SCOPES[session.role]],
          },
        }),
      );
    },
  );
}
