import type { z } from "zod";
import { signedInSchema, whoAmISchema } from "../../contract/auth.ts";
import { parseBody } from "./api-paths.ts";
import { cliTransport, sendPrepared, type ApiRequest, type RequestTiming } from "./http.ts";

/** The requests of `svc auth`, and the answers they expect: `/v1/auth/…`. */

export type SignedIn = z.infer<typeof signedInSchema>;
export type WhoAmI = z.infer<typeof whoAmISchema>;

async function send(
  base: URL,
  token: string | null,
  request: ApiRequest,
  onTiming?: (timing: RequestTiming) => void,
) {
  const transport = cliTransport({ base, token, onTiming });
  return sendPrepared(transport, transport.prepare(request));
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
export async function whoAmI(
  base: URL,
  token: string,
  onTiming?: (timing: RequestTiming) => void,
): Promise<WhoAmI> {
  return parseBody(
    whoAmISchema,
    await send(base, token, { method: "GET", path: "v1/auth/session" }, onTiming),
  );
}

/** `DELETE /v1/auth/session`: revokes the session the token is. */
export async function revokeSession(base: URL, token: string): Promise<void> {
  await send(base, token, { method: "DELETE", path: "v1/auth/session" });
}
