import assert from "node:assert/strict";
import type { LightMyRequestResponse } from "fastify";
import { hashToken, newOperatorToken } from "../../src/crypto/tokens.ts";
import type { KeyScope } from "../../src/interfaces.ts";
import type { InProcessApi } from "./in-process-api.ts";
import { checkAnswer } from "./openapi-check.ts";

let operatorKeys = 0;

/** An operator key (decision 42) of the in-process API's store, with `scopes`: its token. */
export async function operatorToken(
  api: InProcessApi,
  scopes: readonly KeyScope[] = ["portal:write"],
): Promise<string> {
  const token = newOperatorToken();
  operatorKeys += 1;
  await api.store.credentials.createApiKey({
    id: `key_operator_${operatorKeys}`,
    workspaceId: null,
    tokenHash: hashToken(token),
    scopes,
  });
  return token;
}

/** A request to the in-process API with `token` as the bearer (null: none), checked against the contract. */
export async function callAs(
  api: InProcessApi,
  token: string | null,
  method: "GET" | "POST" | "PATCH" | "DELETE",
  url: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const response = await api.app.inject({
    method,
    url,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
  });
  checkAnswer(method, url, response.statusCode, response.body);
  return response;
}

export interface MadePortalLink {
  readonly url: string;
  readonly expiresAt: string;
  /** The one-time token, from the URL's fragment. */
  readonly token: string;
}

/** `POST …/portal-links` with an operator key; the link, its token read from the fragment. */
export async function portalLink(
  api: InProcessApi,
  operator: string,
  body: { role: string; expires_in?: number },
  workspaceId = api.workspaceId,
): Promise<MadePortalLink> {
  const response = await callAs(
    api,
    operator,
    "POST",
    `/v1/workspaces/${workspaceId}/portal-links`,
    {
      body,
    },
  );
  assert.equal(response.statusCode, 201, response.body);
  const { url, expires_at } = response.json<{ url: string; expires_at: string }>();
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get("token");
  assert.ok(token !== null, `a token in the fragment of ${url}`);
  return { url, expiresAt: expires_at, token };
}

/** `POST /v1/auth/portal-sessions` with a link's token: the answer. */
export function openPortal(api: InProcessApi, linkToken: string): Promise<LightMyRequestResponse> {
  return callAs(api, null, "POST", "/v1/auth/portal-sessions", { body: { token: linkToken } });
}

/** Opens the link and returns the portal session's token. */
export async function portalSession(api: InProcessApi, linkToken: string): Promise<string> {
  const opened = await openPortal(api, linkToken);
  assert.equal(opened.statusCode, 201, opened.body);
  return opened.json<{ token: string }>().token;
}
