import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { idempotencyResponseContext } from "../crypto/sealing-contexts.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { isReplayableStatus } from "../contract/operations.ts";
import { AppError } from "../errors.ts";
import type { Store } from "../interfaces.ts";
import { principalOf, type Credential } from "./auth/credential.ts";
import "./request-context.ts";

/** Keys live 24 hours (SPEC section 8), then they are purged and may be used afresh. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
/**
 * How long a request holds its key. A request that dies (the process is killed) leaves its
 * lock behind; once it expires the same request may run again under the key.
 */
export const IDEMPOTENCY_LOCK_MS = 60_000;
const maxKeyLength = 255;
const mutatingMethods = new Set(["POST", "PATCH", "DELETE"]);

/**
 * Responses kept for replay: those of a status the contract says (`isReplayableStatus`:
 * successes and the client errors the same request would meet again). Keys are taken only
 * after authorisation.
 */
function isReplayable(status: number, payload: string): boolean {
  if (!isReplayableStatus(status)) return false;
  // A host name that did not resolve may resolve in a minute: not the same request's fate.
  return !(status === 400 && payload.includes('"code":"url_unresolvable"'));
}

function parseKey(header: string | string[]): string {
  const key = (Array.isArray(header) ? header.join(",") : header).trim();
  if (key.length === 0 || key.length > maxKeyLength) {
    throw new AppError(
      "invalid_idempotency_key",
      `The Idempotency-Key must be 1 to ${maxKeyLength} characters after trimming; it is ${key.length}.`,
      { param: "Idempotency-Key" },
    );
  }
  return key;
}

/**
 * Who sent the request: the API key, or the signed-in user (whichever session). A replay
 * would hand a create's signing secret to whoever repeats the request, so another credential
 * of the same workspace reusing the key meets `idempotency_error` instead.
 */
function caller(credential: Credential | undefined): string {
  return credential === undefined ? "" : principalOf(credential);
}

/**
 * The caller, the method, the route the router matched with its parameters as it decoded
 * them (one operation, however its path was spelled: decision 39), the query values (decoded,
 * in a stable order) and the exact body.
 */
function fingerprint(request: FastifyRequest): string {
  const query = request.url.split("?", 2)[1] ?? "";
  const values = [...new URLSearchParams(query)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const route = [request.routeOptions.url ?? "", request.params];
  const parts = [caller(request.credential), request.method, route, values, request.rawBody ?? ""];
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

export function registerIdempotency(
  app: FastifyInstance,
  dependencies: { store: Pick<Store, "idempotency">; secretBox: SecretBox },
): void {
  const { store, secretBox } = dependencies;

  app.addHook("preHandler", async (request, reply) => {
    const header = request.headers["idempotency-key"];
    const workspaceId = request.authorisedWorkspace;
    if (header === undefined || workspaceId === undefined || !mutatingMethods.has(request.method)) {
      return;
    }
    const key = parseKey(header);
    const claim = await store.idempotency.acquireIdempotencyKey(
      workspaceId,
      key,
      fingerprint(request),
      {
        lockMs: IDEMPOTENCY_LOCK_MS,
        ttlMs: IDEMPOTENCY_KEY_TTL_MS,
      },
    );
    switch (claim.kind) {
      case "acquired":
        request.idempotency = { workspaceId, key };
        return;
      case "replay":
        return replay(reply, claim.response.status, claim.response.contentType, () =>
          secretBox.decrypt(
            claim.response.sealedBody,
            idempotencyResponseContext(workspaceId, key),
          ),
        );
      case "mismatch":
        throw new AppError(
          "idempotency_error",
          "This Idempotency-Key was already used for a different request (method, path, query or body differ). Use a new key for a new operation.",
        );
      case "in_progress":
        throw new AppError("idempotency_in_progress");
    }
  });

  app.addHook("onSend", async (request, reply, payload) => {
    const held = request.idempotency;
    if (held === undefined) return payload;
    request.idempotency = undefined;
    if (typeof payload === "string" && isReplayable(reply.statusCode, payload)) {
      await store.idempotency.completeIdempotencyKey(held.workspaceId, held.key, {
        status: reply.statusCode,
        contentType: String(reply.getHeader("content-type") ?? "application/json; charset=utf-8"),
        sealedBody: secretBox.encrypt(
          payload,
          idempotencyResponseContext(held.workspaceId, held.key),
        ),
      });
    } else {
      await store.idempotency.releaseIdempotencyKey(held.workspaceId, held.key);
    }
    return payload;
  });
}

function replay(
  reply: FastifyReply,
  status: number,
  contentType: string,
  body: () => string,
): FastifyReply {
  return reply
    .status(status)
    .header("content-type", contentType)
    .header("idempotent-replayed", "true")
    .send(body());
}
