import type { FastifyInstance } from "fastify";
import { signInBody } from "../../contract/auth.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { unknownAccountHash } from "../../crypto/passwords.ts";
import { AppError } from "../../errors.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput } from "../parse-input.ts";
import {
  clearSessionCookie,
  cookieToken,
  csrfTokenFor,
  setSessionCookie,
} from "./cookie-session.ts";
import { workspacesOf, type Credential, type WorkspaceAccess } from "./credential.ts";
import { signIn } from "./sign-in.ts";

const { signIn: signInOperation, signInBrowser, whoAmI, signOut } = operations;

function workspaceBody(access: WorkspaceAccess) {
  return { id: access.id, name: access.name, role: access.role, scopes: [...access.scopes] };
}

function signedInCredential(request: { credential?: Credential }): Credential {
  // The onRequest hook sets it on every route marked `authenticated`; this is its invariant.
  if (request.credential === undefined) throw new Error("route is not marked authenticated");
  return request.credential;
}

/**
 * Sign-in and the session in use: `POST /v1/auth/sessions` (public, rate limited),
 * `POST /v1/auth/browser-sessions` (the same, the token in a cookie: decision 35),
 * `GET /v1/auth/session` (who am I, for sessions and API keys alike) and
 * `DELETE /v1/auth/session` (sign out: revokes the session the request carries).
 */
export function registerAuthRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store } = dependencies;
  // Made now, so that no sign-in pays for it (its extra time would tell an unknown account).
  void unknownAccountHash();

  app.post(routePath(signInOperation), accessConfig(signInOperation), async (request, reply) => {
    const input = parseInput(signInBody, request.body);
    const { token, session } = await signIn(dependencies, { ...input, address: request.ip });
    const workspaces = await workspacesOf(store, { kind: "session", session });
    return reply.status(signInOperation.success.status).send(
      successBody(signInOperation, {
        token,
        expires_at: session.expiresAt.toISOString(),
        user: { id: session.user.id, email: session.user.email },
        workspaces: workspaces.map(workspaceBody),
      }),
    );
  });

  app.post(routePath(signInBrowser), accessConfig(signInBrowser), async (request, reply) => {
    const input = parseInput(signInBody, request.body);
    const { token, session } = await signIn(dependencies, { ...input, address: request.ip });
    const workspaces = await workspacesOf(store, { kind: "session", session });
    setSessionCookie(request, reply, {
      token,
      expiresAt: session.expiresAt,
      behindTls: dependencies.behindTls,
    });
    return reply.status(signInBrowser.success.status).send(
      successBody(signInBrowser, {
        csrf_token: csrfTokenFor(token),
        expires_at: session.expiresAt.toISOString(),
        user: { id: session.user.id, email: session.user.email },
        workspaces: workspaces.map(workspaceBody),
      }),
    );
  });

  app.get(routePath(whoAmI), accessConfig(whoAmI), async (request) => {
    const credential = signedInCredential(request);
    const workspaces = (await workspacesOf(store, credential)).map(workspaceBody);
    switch (credential.kind) {
      case "session": {
        const { session } = credential;
        const cookie = request.viaCookie === true ? cookieToken(request) : undefined;
        return successBody(whoAmI, {
          kind: "session",
          user: { id: session.user.id, email: session.user.email },
          expires_at: session.expiresAt.toISOString(),
          workspaces,
          ...(cookie === undefined ? {} : { csrf_token: csrfTokenFor(cookie) }),
        });
      }
      case "api_key":
        return successBody(whoAmI, {
          kind: "api_key",
          key_id: credential.apiKey.id,
          user: null,
          workspaces,
        });
      case "portal":
        return successBody(whoAmI, {
          kind: "portal",
          user: null,
          expires_at: credential.portal.expiresAt.toISOString(),
          workspaces,
        });
    }
  });

  app.delete(routePath(signOut), accessConfig(signOut), async (request, reply) => {
    const credential = signedInCredential(request);
    if (credential.kind === "portal") {
      // The portal's "End session": its session ends, as a sign-out (decision 43).
      await store.portal.revokeSession(credential.portal.id);
      return successBody(signOut, { id: credential.portal.id, revoked: true });
    }
    if (credential.kind !== "session") {
      throw new AppError(
        "invalid_request",
        "Only a session can be signed out. An API key is revoked by an operator: `svc admin keys revoke <key-id>`.",
      );
    }
    await store.credentials.revokeSession(credential.session.id);
    if (request.viaCookie === true) clearSessionCookie(request, reply, dependencies.behindTls);
    return successBody(signOut, { id: credential.session.id, revoked: true });
  });
}
