import type { z } from "zod";
import type { signedInSchema, whoAmISchema } from "../../contract/auth.ts";
import { ROLES, SCOPES } from "../../interfaces.ts";
import {
  arrayOf,
  either,
  isString,
  nullable,
  objectOf,
  oneOf,
  optional,
  type AnswerShape,
} from "./answer-shape.ts";
import { checkedBody, parseBody } from "./api-paths.ts";
import { cliTransport, sendPrepared, type ApiRequest, type RequestTiming } from "./http.ts";

/**
 * The requests of `svc auth`, and the answers they expect: `/v1/auth/…`. "Who am I" is also
 * what a command asks when no workspace is named, so its answer is checked by a guard that
 * loads no zod (`answer-shape.ts`); signing in loads the contract's schema.
 */

export type SignedIn = z.infer<typeof signedInSchema>;
export type WhoAmI = z.infer<typeof whoAmISchema>;

const contract = () => import("../../contract/auth.ts");

const workspaces = arrayOf(
  objectOf({
    id: isString,
    name: isString,
    role: nullable(oneOf(ROLES)),
    scopes: arrayOf(oneOf(SCOPES)),
  }),
);

/** The credential a request carries: a session, an API key or a portal session. */
export const whoAmIShape: AnswerShape<WhoAmI> = {
  accepts: either(
    objectOf({
      kind: oneOf(["session"]),
      user: objectOf({ id: isString, email: isString }),
      expires_at: isString,
      workspaces,
      csrf_token: optional(isString),
    }),
    either(
      objectOf({ kind: oneOf(["api_key"]), key_id: isString, user: oneOf([null]), workspaces }),
      objectOf({ kind: oneOf(["portal"]), user: oneOf([null]), expires_at: isString, workspaces }),
    ),
  ),
  schema: async () => (await contract()).whoAmISchema,
};

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
  return parseBody((await contract()).signedInSchema, response);
}

/** `GET /v1/auth/session`: who the token is, and the workspaces it reaches. */
export async function whoAmI(
  base: URL,
  token: string,
  onTiming?: (timing: RequestTiming) => void,
): Promise<WhoAmI> {
  return checkedBody(
    whoAmIShape,
    await send(base, token, { method: "GET", path: "v1/auth/session" }, onTiming),
  );
}

/** `DELETE /v1/auth/session`: revokes the session the token is. */
export async function revokeSession(base: URL, token: string): Promise<void> {
  await send(base, token, { method: "DELETE", path: "v1/auth/session" });
}
