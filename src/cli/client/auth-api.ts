import { z } from "zod";
import { ROLES, SCOPES } from "../../interfaces.ts";
import { parseBody } from "./api-paths.ts";
import { prepareRequest, sendRequest, type ApiRequest } from "./http.ts";

/** The requests of `svc auth`, and the answers they expect: `/v1/auth/…`. */

const AUTH_TIMEOUT_MS = 30_000;

const workspace = z.object({
  id: z.string(),
  name: z.string(),
  role: z.enum(ROLES).nullable(),
  scopes: z.array(z.enum(SCOPES)),
});
const user = z.object({ id: z.string(), email: z.string() });

const signedInSchema = z.object({
  token: z.string().startsWith("svs_"),
  expires_at: z.string(),
  user,
  workspaces: z.array(workspace),
});
export type SignedIn = z.infer<typeof signedInSchema>;

const whoAmISchema = z.object({
  kind: z.enum(["session", "api_key"]),
  user: user.nullable(),
  expires_at: z.string().nullish(),
  key_id: z.string().optional(),
  workspaces: z.array(workspace),
});
export type WhoAmI = z.infer<typeof whoAmISchema>;

async function send(base: URL, token: string | null, request: ApiRequest) {
  return sendRequest(prepareRequest(base, token, request), { timeoutMs: AUTH_TIMEOUT_MS });
}

/** `POST /v1/auth/sessions`: a new session for an e-mail address and password. */
export async function createSession(
  base: URL,
  credentials: { email: string; password: string },
): Promise<SignedIn> {
  const response = await send(base, null, {
    method: "POST",
    path: "v1/auth/sessions",
    body: credentials,
  });
  return parseBody(signedInSchema, response);
}

/** `GET /v1/auth/session`: who the token is, and the workspaces it reaches. */
export async function whoAmI(base: URL, token: string): Promise<WhoAmI> {
  return parseBody(
    whoAmISchema,
    await send(base, token, { method: "GET", path: "v1/auth/session" }),
  );
}

/** `DELETE /v1/auth/session`: revokes the session the token is. */
export async function revokeSession(base: URL, token: string): Promise<void> {
  await send(base, token, { method: "DELETE", path: "v1/auth/session" });
}
