import type { FastifyRequest } from "fastify";
import { hashToken, newId, newPortalLinkToken } from "../../crypto/tokens.ts";
import type { PortalRole } from "../../interfaces.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { portalPagePath } from "../dashboard/routes.ts";

/** A portal link as answered: the URL (its token in the fragment) and when it dies unopened. */
export interface PortalLink {
  readonly url: string;
  readonly expiresAt: Date;
}

/**
 * Where the link points: `publicUrl`, or else the origin the request came to (over https when
 * the server is `behindTls`). The caller is an operator key's holder, who is handed the URL:
 * a Host header of their choosing misleads only themselves.
 */
function originOf(request: FastifyRequest, dependencies: ApiDependencies): string {
  if (dependencies.portal.publicUrl !== null) return dependencies.portal.publicUrl;
  const protocol = dependencies.behindTls ? "https" : request.protocol;
  return `${protocol}://${request.host}`;
}

/**
 * Makes a one-time link to the workspace's portal (decision 43): a new `spl_` token, of which
 * only the hash is stored, in the URL's fragment — which a browser sends to no server, puts in
 * no Referer, and which the portal page removes from the address bar as it opens — followed by
 * the settings' theming (`name`, `accent`, `theme`), which a platform may override by
 * appending its own.
 */
export async function makePortalLink(
  request: FastifyRequest,
  dependencies: ApiDependencies,
  link: { workspaceId: string; role: PortalRole; expiresInSeconds?: number },
): Promise<PortalLink> {
  const { store, clock, portal } = dependencies;
  const token = newPortalLinkToken();
  const ttlMs =
    link.expiresInSeconds === undefined ? portal.linkTtlMs : link.expiresInSeconds * 1000;
  const expiresAt = new Date(clock.now().getTime() + ttlMs);
  await store.portal.createLink({
    id: newId("psn"),
    workspaceId: link.workspaceId,
    role: link.role,
    tokenHash: hashToken(token),
    expiresAt,
  });
  const fragment = new URLSearchParams({ token, ...portal.theming });
  return {
    url: `${originOf(request, dependencies)}${portalPagePath}#${fragment.toString()}`,
    expiresAt,
  };
}
