import type { z } from "zod";
import { signedInSchema, whoAmISchema } from "../../contract/auth.ts";
import { parseBody } from "./api-paths.ts";
import { prepareRequest, sendRequest, type ApiRequest, type RequestTiming } from "./http.ts";
import { sendWithRetries } from "./retry.ts";

/** The requests of `svc auth`, and the answers they expect: `/v1/auth/…`. */

const AUTH_TIMEOUT_MS = 30_000;

export type SignedIn = z.infer<typeof signedInSchema>;
export type WhoAmI = z.infer<typeof whoAmISchema>;

/**
 * Sends once, and again only when the request budget refused it (decision 45): then nothing
 * was done, which makes even a sign-in safe to send again.
 */
async function send(
  base: URL,
  token: string | null,
  request: ApiRequest,
  onTiming?: (timing: RequestTiming) => void,
) {
  const prepared = prepareRequest(base, token, request);
  return sendWithRetries(
    () =>
      sendRequest(prepared, {
        timeoutMs: AUTH_TIMEOUT_MS,
        ...(onTiming === undefined ? {} : { onTiming }),
      }),
    () => undefined,
    false,
  );
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
