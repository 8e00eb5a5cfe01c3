import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { MAX_PASSWORD_LENGTH, unknownAccountHash } from "../../crypto/passwords.ts";
import { AppError } from "../../errors.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput } from "../webhooks/input.ts";
import { workspacesOf, type Credential, type WorkspaceAccess } from "./credential.ts";
import { signIn } from "./sign-in.ts";

const signInBody = z.strictObject({
  email: z
    .string({ error: "email is required" })
    .min(1)
    .max(320)
    // eslint-disable-next-line no-control-regex -- control characters are what it refuses
    .regex(/^[^\u0000-\u001f\u007f]*$/, { error: "email must not contain control characters" }),
  password: z.string({ error: "password is required" }).min(1).max(MAX_PASSWORD_LENGTH),
});

function workspaceBody(access: WorkspaceAccess) {
  return { id: access.id, name: access.name, role: access.role, scopes: access.scopes };
}

function signedInCredential(request: { credential?: Credential }): Credential {
  // The onRequest hook sets it on every route marked `authenticated`; this is its invariant.
  if (request.credential === undefined) throw new Error("route is not marked authenticated");
  return request.credential;
}

/**
 * Sign-in and the session in use: `POST /v1/auth/sessions` (public, rate limited),
 * `GET /v1/auth/session` (who am I, for sessions and API keys alike) and
 * `DELETE /v1/auth/session` (sign out: revokes the session the request carries).
 */
export function registerAuthRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store } = dependencies;
  // Made now, so that no sign-in pays for it (its extra time would tell an unknown account).
  void unknownAccountHash();

  app.post("/v1/auth/sessions", async (request, reply) => {
    const input = parseInput(signInBody, request.body);
    const { token, session } = await signIn(dependencies, { ...input, address: request.ip });
    const workspaces = await workspacesOf(store, { kind: "session", session });
    return reply.status(201).send({
      token,
      expires_at: session.expiresAt.toISOString(),
      user: { id: session.user.id, email: session.user.email },
      workspaces: workspaces.map(workspaceBody),
    });
  });

  const authenticated = { config: { authenticated: true } } as const;

  app.get("/v1/auth/session", authenticated, async (request) => {
    const credential = signedInCredential(request);
    const workspaces = (await workspacesOf(store, credential)).map(workspaceBody);
    switch (credential.kind) {
      case "session": {
        const { session } = credential;
        return {
          kind: "session",
          user: { id: session.user.id, email: session.user.email },
          expires_at: session.expiresAt.toISOString(),
          workspaces,
        };
      }
      case "api_key":
        return { kind: "api_key", key_id: credential.apiKey.id, user: null, workspaces };
    }
  });

  app.delete("/v1/auth/session", authenticated, async (request) => {
    const credential = signedInCredential(request);
    if (credential.kind !== "session") {
      throw new AppError(
        "invalid_request",
        "Only a session can be signed out. An API key is revoked by an operator: `svc admin keys revoke <key-id>`.",
      );
    }
    await store.credentials.revokeSession(credential.session.id);
    return { id: credential.session.id, revoked: true };
  });
}
