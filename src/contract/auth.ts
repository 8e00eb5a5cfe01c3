import { z } from "zod";
import { MAX_PASSWORD_LENGTH } from "../crypto/passwords.ts";
import { ROLES, SCOPES } from "../interfaces.ts";
import { isoTime } from "./common.ts";

/** Signing in and the credential in use (docs/http-api.md, "The HTTP API of signing in"). */

export const signInBody = z
  .strictObject({
    email: z
      .string({ error: "email is required" })
      .min(1)
      .max(320)
      // eslint-disable-next-line no-control-regex -- control characters are what it refuses
      .regex(/^[^\u0000-\u001f\u007f]*$/, { error: "email must not contain control characters" })
      .meta({ examples: ["ada@example.com"] }),
    password: z.string({ error: "password is required" }).min(1).max(MAX_PASSWORD_LENGTH),
  })
  .meta({ id: "SignIn" });

const user = z.object({
  id: z.string().meta({ examples: ["usr_6d1c0e2f4a8b9c3d5e7f1a2b"] }),
  email: z.string(),
});

export const workspaceAccessSchema = z
  .object({
    id: z.string().meta({ examples: ["ws_0b7c3d5e9f1a2b4c6d8e0f12"] }),
    name: z.string(),
    role: z.enum(ROLES).nullable().meta({ description: "The user's role; null for an API key." }),
    scopes: z.array(z.enum(SCOPES)),
  })
  .meta({ id: "WorkspaceAccess" });

export const signedInSchema = z
  .object({
    token: z
      .string()
      // A pattern, not startsWith(): zod renders that as `format: "starts_with"`, no format
      // OpenAPI tools know (issue 30).
      .regex(/^svs_/)
      .meta({ description: "The session's bearer token, shown once." }),
    expires_at: isoTime,
    user,
    workspaces: z.array(workspaceAccessSchema),
  })
  .meta({ id: "SignedIn" });

const csrfToken = z.string().meta({
  description:
    "The session's CSRF token: send it as `X-CSRF-Token` with every change made with the session cookie.",
});

/** A dashboard's sign-in: the token went into an HttpOnly cookie and is not in the answer. */
export const browserSignedInSchema = z
  .object({
    csrf_token: csrfToken,
    expires_at: isoTime,
    user,
    workspaces: z.array(workspaceAccessSchema),
  })
  .meta({ id: "BrowserSignedIn" });

export const whoAmISchema = z
  .discriminatedUnion("kind", [
    z.object({
      kind: z.literal("session"),
      user,
      expires_at: isoTime,
      workspaces: z.array(workspaceAccessSchema),
      csrf_token: csrfToken.optional().meta({
        description:
          "Only when the request authenticated with the dashboard's session cookie: its CSRF token.",
      }),
    }),
    z.object({
      kind: z.literal("api_key"),
      key_id: z.string(),
      user: z.null(),
      workspaces: z.array(workspaceAccessSchema),
    }),
    z.object({
      kind: z.literal("portal"),
      user: z.null(),
      expires_at: isoTime,
      workspaces: z
        .array(workspaceAccessSchema)
        .meta({ description: "The one workspace a portal session reaches." }),
    }),
  ])
  .meta({ id: "WhoAmI", description: "The credential the request carries." });

export const signedOutSchema = z
  .object({ id: z.string(), revoked: z.literal(true) })
  .meta({ id: "SignedOut" });
