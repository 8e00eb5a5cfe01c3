import type { FastifyInstance, FastifyRequest } from "fastify";
import "./request-context.ts";
import { hashToken } from "../crypto/tokens.ts";
import { AppError } from "../errors.ts";
import type { KeyScope, OperatorScope, Scope, Store } from "../interfaces.ts";
import { checkCsrf, cookieToken } from "./auth/cookie-session.ts";
import {
  identify,
  isOperatorKey,
  scopesIn,
  SESSION_TOKEN_PREFIX,
  type Credential,
} from "./auth/credential.ts";
import { isWellFormedId } from "./parse-input.ts";

/** A scope that grants another: write implies read. */
const implied: Partial<Record<KeyScope, KeyScope>> = {
  "webhooks:write": "webhooks:read",
  "events:write": "events:read",
  "workspaces:write": "workspaces:read",
};

export function grants(scopes: readonly KeyScope[], needed: KeyScope): boolean {
  return scopes.some((scope) => scope === needed || implied[scope] === needed);
}

/**
 * The token the request presents: `Authorization: Bearer`, or else the dashboard's session
 * cookie, which only a session token may be and which needs the session's CSRF token on any
 * change (decision 35). A request with both is judged by its header alone.
 */
function presentedToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const fromCookie = header === undefined ? cookieToken(request) : undefined;
  if (fromCookie !== undefined) {
    if (!fromCookie.startsWith(SESSION_TOKEN_PREFIX)) {
      throw new AppError("unauthenticated", "The session cookie is not valid. Sign in again.");
    }
    // The dashboard's cookie is for the dashboard's calls: never a listen stream, whose GET
    // takes a session over (a change no CSRF token would guard). Read from the route the
    // router matched, never from the URL, which may spell the same route another way
    // (`listen%2Dsessions`; decision 39).
    if (request.routeOptions.config.cookie === false) {
      throw new AppError(
        "unauthenticated",
        "Listen sessions take an API key or a session token as `Authorization: Bearer`, not the dashboard's cookie.",
      );
    }
    checkCsrf(request, fromCookie);
    request.viaCookie = true;
    return fromCookie;
  }
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match?.[1] === undefined) {
    throw new AppError(
      "unauthenticated",
      "Send an API key or session token as `Authorization: Bearer <token>`. Set SERVICE_API_KEY or sign in with `svc auth login`.",
    );
  }
  return match[1];
}

/**
 * The credential of the token the request presents, looked up by the hash the request budget
 * already worked out when it is of the same token (decision 54), else by a hash made here.
 */
async function identifyPresented(
  store: Pick<Store, "credentials" | "portal">,
  request: FastifyRequest,
): Promise<Credential> {
  const token = presentedToken(request);
  const known = request.presentedTokenHash;
  const tokenHash = known?.token === token ? known.hash : hashToken(token);
  return identify(store, token, useNotRecorded(request), tokenHash);
}

/** A key's use that could not be written is logged; the request goes on. */
function useNotRecorded(request: FastifyRequest): (error: unknown) => void {
  return (error) => {
    request.log.warn({ err: error }, "the API key's last use could not be recorded");
  };
}

/**
 * Who is calling, and may they do this here? The workspace is checked before anything is
 * looked up in it, so a credential without access learns nothing about the ids inside (403
 * whatever id is asked for); then the scope. An API key has its own scopes in its one
 * workspace; a session has its user's role's scopes in each workspace they are a member of.
 */
async function authorise(
  store: Pick<Store, "credentials" | "portal">,
  request: FastifyRequest,
  workspaceId: string,
  scope: Scope,
): Promise<{ credential: Credential; scopes: readonly Scope[] }> {
  const credential = await identifyPresented(store, request);
  const scopes = isWellFormedId(workspaceId)
    ? await scopesIn(store, credential, workspaceId)
    : null;
  if (scopes === null) {
    throw new AppError(
      "workspace_forbidden",
      `These credentials have no access to workspace ${workspaceId}.`,
    );
  }
  if (!grants(scopes, scope)) {
    throw new AppError("insufficient_scope", `This operation needs the ${scope} scope.`);
  }
  return { credential, scopes };
}

/**
 * May the caller do this operator operation (decision 42)? Only an operator key may, and only
 * with the scope: a workspace's key, a session (bearer or cookie) is refused whatever it may
 * do in workspaces, before anything is looked up.
 */
async function authoriseOperator(
  store: Pick<Store, "credentials" | "portal">,
  request: FastifyRequest,
  scope: OperatorScope,
): Promise<Credential> {
  const credential = await identifyPresented(store, request);
  if (!isOperatorKey(credential)) {
    throw new AppError("operator_key_required");
  }
  if (!grants(credential.apiKey.scopes, scope)) {
    throw new AppError(
      "insufficient_scope",
      `This operation needs the ${scope} scope. Make an operator key that has it: \`svc admin keys create --operator --scopes ${scope} --output <file>\`.`,
    );
  }
  return credential;
}

/**
 * Every route that declares a scope is authorised before its body is even parsed, for the
 * workspace in its path; a route that declares an operator scope, for an operator key; a
 * route marked `authenticated` only needs a valid credential. Later hooks (idempotency) and
 * the handler can rely on `credential`, `grantedScopes` and `authorisedWorkspace`. Every
 * decision here reads the matched route's config and the parameters the router decoded,
 * never the request's URL (decision 39).
 */
export function registerAuthorisation(
  app: FastifyInstance,
  store: Pick<Store, "credentials" | "portal">,
): void {
  app.addHook("onRequest", async (request) => {
    const { scope, operatorScope, authenticated } = request.routeOptions.config;
    if (operatorScope !== undefined) {
      request.credential = await authoriseOperator(store, request, operatorScope);
      // Idempotency keys of an operation on a workspace are that workspace's (and go with
      // it); those of creating one are the server's ("").
      const { workspace = "" } = request.params as { workspace?: string };
      request.authorisedWorkspace = workspace;
    } else if (scope !== undefined) {
      const { workspace = "" } = request.params as { workspace?: string };
      const granted = await authorise(store, request, workspace, scope);
      request.credential = granted.credential;
      request.grantedScopes = granted.scopes;
      request.authorisedWorkspace = workspace;
    } else if (authenticated === true) {
      request.credential = await identifyPresented(store, request);
    }
  });
}
