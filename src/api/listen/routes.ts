import type { FastifyInstance, FastifyRequest } from "fastify";
import { workspaceParams } from "../../contract/common.ts";
import {
  listenResultBody,
  listenSessionParams,
  openListenSessionBody,
  type listenSessionSchema,
} from "../../contract/listen.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import type { z } from "zod";
import { destinationSecretContext } from "../../crypto/sealing-contexts.ts";
import { newId, newSigningSecret, parseDeliveryId } from "../../crypto/tokens.ts";
import { decide, type Outcome } from "../../delivery/attempt.ts";
import type { ErrorClass } from "../../delivery/http-sender.ts";
import { AppError } from "../../errors.ts";
import { storableText } from "../../lib/storable-text.ts";
import type { ListenSessionRecord } from "../../store/listen-sessions.ts";
import { principalOf } from "../auth/credential.ts";
import { grants } from "../authenticate.ts";
import { deliveryBody } from "../delivery-log/serialize.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import { unnamedListenSessionTtlMs } from "./settings.ts";
import { ListenStream, type ListenStreams, type ListenStreamSettings } from "./streams.ts";

const {
  openListenSession: open,
  listListenSessions: list,
  deleteListenSession: remove,
  streamListenSession: stream,
  reportListenResult: report,
} = operations;

/** The most live sessions a workspace may have: each receives every event it subscribes to. */
export const liveSessionLimit = 20;
/** The most sessions a list answers with (more than can be live). */
const listLimit = 100;

function notFound(id: string): AppError {
  return new AppError("not_found", `No listen session ${id} in this workspace.`, { param: "id" });
}

/**
 * Whether the request's credential may resume, end or take over a session opened by
 * `openedBy` (decision 39): the credential that opened it (the same API key; the same user,
 * whichever of their sessions), or one with `events:write`, which may change what the
 * workspace's deliveries do anyway. A session opened before openers were kept (null) needs
 * `events:write`. Everyone with `events:read` may still list sessions and open their own.
 */
function mayActFor(request: FastifyRequest): (openedBy: string | null) => boolean {
  const { credential, grantedScopes = [] } = request;
  const principal = credential === undefined ? null : principalOf(credential);
  const actsForAny = grants(grantedScopes, "events:write");
  return (openedBy) => actsForAny || (openedBy !== null && openedBy === principal);
}

function openedByAnother(): AppError {
  return new AppError("listen_session_forbidden");
}

/** The result's texts as the database can keep them (NUL, lone surrogates: U+FFFD). */
function storable<T extends { error: string | null; response_body: string | null }>(input: T): T {
  return {
    ...input,
    error: input.error === null ? null : storableText(input.error),
    response_body: input.response_body === null ? null : storableText(input.response_body),
  };
}

/** The error classes the CLI's words map to, as the worker's sender would class them. */
function errorClassOf(error: string): ErrorClass {
  if (/timed out|timeout/i.test(error)) return "timeout";
  if (/tls|certificate|ssl/i.test(error)) return "tls";
  return "connection";
}

/**
 * Listen sessions (CONTRACT.md "Local forwarding", decision 34): opened, listed and ended
 * like destinations, streamed as server-sent events, and their results reported back as
 * attempts. Every route needs `events:read`: a session sees what the event log shows; to
 * resume, end or take over a session takes the credential that opened it or `events:write`
 * (decision 39).
 */
export function registerListenRoutes(
  app: FastifyInstance,
  dependencies: ApiDependencies,
  listening: { streams: ListenStreams; settings: ListenStreamSettings },
): void {
  const { store, secretBox, clock } = dependencies;
  const listen = { ...dependencies.listen, ...listening };

  const sessionBody = (session: ListenSessionRecord): z.output<typeof listenSessionSchema> => {
    const seen = session.lastSeenAt ?? session.createdAt;
    return {
      id: session.id,
      name: session.name,
      events: [...session.events],
      created_at: session.createdAt.toISOString(),
      last_seen_at: session.lastSeenAt?.toISOString() ?? null,
      expires_at: new Date(
        seen.getTime() +
          (session.name === null
            ? Math.min(listen.sessionTtlMs, unnamedListenSessionTtlMs)
            : listen.sessionTtlMs),
      ).toISOString(),
      connected: session.connected,
      pending: session.pending,
    };
  };

  /** The workspace and session id of a member route; a malformed id names nothing. */
  const sessionOf = (params: unknown) => {
    const { workspace, id } = parseInput(listenSessionParams, params);
    if (!isWellFormedId(id) || !id.startsWith("lsn_")) throw notFound(id);
    return { workspace, id };
  };

  app.post(routePath(open), accessConfig(open), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const input = parseInput(openListenSessionBody, request.body);
    const id = newId("lsn");
    const secret = newSigningSecret();
    const { credential } = request;
    if (credential === undefined) throw new AppError("unauthenticated");
    const opened = await store.listen.open(
      {
        id,
        workspaceId: workspace,
        name: input.name ?? null,
        events: input.events,
        secretCiphertext: secretBox.encrypt(secret, destinationSecretContext(id)),
        openedBy: principalOf(credential),
      },
      { limit: liveSessionLimit, mayResume: mayActFor(request) },
    );
    if (opened.kind === "limit_reached") throw new AppError("too_many_listen_sessions");
    if (opened.kind === "opened_by_another") throw openedByAnother();
    // The secret only in the answer that created the session, as for a destination.
    return successBody(open, {
      ...sessionBody(opened.session),
      created: opened.created,
      ...(opened.created ? { secret } : {}),
    });
  });

  app.get(routePath(list), accessConfig(list), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const sessions = await store.listen.list(workspace, listLimit);
    return successBody(list, { data: sessions.map(sessionBody) });
  });

  app.delete(routePath(remove), accessConfig(remove), async (request) => {
    const { workspace, id } = sessionOf(request.params);
    const session = await store.listen.get(workspace, id);
    if (session === null) throw notFound(id);
    // Who opened a session never changes: checked once, before it is ended.
    if (!mayActFor(request)(session.openedBy)) throw openedByAnother();
    if (!(await store.listen.end(workspace, id, "listen session ended"))) throw notFound(id);
    listen.streams.endSession(id);
    return successBody(remove, { id, deleted: true });
  });

  app.get(routePath(stream), accessConfig(stream), async (request, reply) => {
    const { workspace, id } = sessionOf(request.params);
    const session = await store.listen.get(workspace, id);
    if (session === null) throw notFound(id);
    if (!mayActFor(request)(session.openedBy)) throw openedByAnother();
    const opened = new ListenStream(
      { id, workspaceId: workspace },
      reply.raw,
      listen.settings,
      () => {
        listen.streams.remove(opened);
      },
    );
    // Heard from the start: a client gone while the session is taken over ends the stream
    // as soon as it starts, instead of leaving it claiming for no one.
    const client = { gone: false };
    reply.raw.on("close", () => {
      client.gone = true;
      opened.end(null);
    });
    if (!(await store.listen.takeOver(id, opened.token))) throw notFound(id);
    // From here the stream is written by hand: Fastify hands over the response.
    reply.hijack();
    if (client.gone || reply.raw.destroyed) {
      // Gone while the session was being taken over: let it go at once.
      await store.listen.release(id, opened.token);
      return;
    }
    reply.raw.writeHead(stream.success.status, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
      // A stream's connection is its own: closed with it, never kept for another request
      // (a kept one would hold the server's shutdown until its keep-alive ran out).
      connection: "close",
    });
    reply.raw.flushHeaders();
    // A stream opened while the server stops is told so at once, never left open.
    if (!listen.streams.add(opened)) return;
    const { socket } = request.raw;
    socket.setNoDelay(true);
    // Quiet between heartbeats by design: its idle bound is at least two of them, so that only
    // a stream whose bytes stopped moving (its client reads no more) is cut (decision 37).
    socket.setTimeout(Math.max(dependencies.limits.idleTimeout, 2 * listen.settings.heartbeatMs));
    opened.start();
  });

  app.post(routePath(report), accessConfig(report), async (request) => {
    const { workspace, id } = sessionOf(request.params);
    const input = storable(parseInput(listenResultBody, request.body));
    const named = parseDeliveryId(input.delivery_id);
    if (named === null || named.destinationId !== id) {
      throw new AppError("not_found", `No delivery ${input.delivery_id} of this session.`, {
        param: "delivery_id",
      });
    }
    const now = clock.now();
    const outcome: Outcome =
      input.status_code === null
        ? {
            kind: "error",
            errorClass: errorClassOf(input.error ?? ""),
            message: input.error ?? "no answer",
          }
        : {
            kind: "response",
            statusCode: input.status_code,
            ...(input.response_body === null ? {} : { body: input.response_body }),
          };
    // One read finds the delivery of a live session of this workspace; the outbox's report
    // then records it if the claim still holds it.
    const session = { workspaceId: workspace, id };
    const recorded = await store.listen.report(session, named.eventId, input.claim, (position) =>
      decide(outcome, {
        startedAt: new Date(now.getTime() - Math.round(input.duration_ms)),
        attemptsMade: position.attempts - position.retryBase + 1,
        now,
        schedule: listen.schedule,
      }),
    );
    if (recorded.kind === "not_found") {
      throw new AppError("not_found", `No delivery ${input.delivery_id} of this session.`, {
        param: "delivery_id",
      });
    }
    if (recorded.kind === "claim_expired") throw new AppError("listen_claim_expired");
    // A retry comes due in the stream's own time; a delivered one frees room for the next.
    listen.streams.wakeSession(id);
    const delivery = await store.log.getDelivery(workspace, input.delivery_id);
    if (delivery === null) throw notFound(id);
    return successBody(report, deliveryBody(delivery));
  });
}
