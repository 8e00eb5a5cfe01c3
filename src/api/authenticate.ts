import type { FastifyInstance, FastifyRequest } from "fastify";
import "./request-context.ts";
import { hashToken } from "../crypto/tokens.ts";
import { AppError } from "../errors.ts";
import type { ApiKey, Scope, Store } from "../interfaces.ts";

/** A scope that grants another: write implies read. */
const implied: Partial<Record<Scope, Scope>> = {
  "webhooks:write": "webhooks:read",
  "events:write": "events:read",
};

export function grants(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.some((scope) => scope === needed || implied[scope] === needed);
}

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match?.[1] === undefined) {
    throw new AppError(
      "unauthenticated",
      "Send an API key as `Authorization: Bearer <key>`. Set SERVICE_API_KEY or sign in with `svc auth login`.",
    );
  }
  return match[1];
}

/**
 * Who is calling, and may they do this here? The workspace is checked before anything is
 * looked up in it, so a credential without access learns nothing about the ids inside (403
 * whatever id is asked for); then the scope.
 */
async function authorise(
  store: Store,
  request: FastifyRequest,
  workspaceId: string,
  scope: Scope,
): Promise<ApiKey> {
  const key = await store.findActiveApiKey(hashToken(bearerToken(request)));
  if (key === null) {
    throw new AppError(
      "unauthenticated",
      "The API key is not valid or has been revoked. Set SERVICE_API_KEY to a valid key or sign in with `svc auth login`.",
    );
  }
  if (key.workspaceId !== workspaceId) {
    throw new AppError(
      "workspace_forbidden",
      `These credentials have no access to workspace ${workspaceId}.`,
    );
  }
  if (!grants(key.scopes, scope)) {
    throw new AppError("insufficient_scope", `This operation needs the ${scope} scope.`);
  }
  return key;
}

/**
 * Every route that declares a scope is authorised before its body is even parsed, for the
 * workspace in its path. Later hooks (idempotency) and the handler can rely on `apiKey`.
 */
export function registerAuthorisation(app: FastifyInstance, store: Store): void {
  app.addHook("onRequest", async (request) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const { workspace } = request.params as { workspace?: string };
    request.apiKey = await authorise(store, request, workspace ?? "", scope);
  });
}
