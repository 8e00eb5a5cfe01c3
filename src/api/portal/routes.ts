import type { FastifyInstance } from "fastify";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { openPortalSessionBody } from "../../contract/portal.ts";
import { hashToken, newPortalSessionToken } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { ROLE_SCOPES } from "../../interfaces.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput } from "../parse-input.ts";

const { openPortalSession } = operations;

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
