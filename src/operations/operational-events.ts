import { API_VERSION } from "../api/events/notification.ts";
import { newEventId } from "../crypto/tokens.ts";
import type { OperationalEventType } from "./event-types.ts";

/**
 * One notice: its type and `data.object`. The object names the workspace, and the
 * destination and delivery where there is one; never a secret, a URL or an event's body.
 */
export interface OperationalNotice {
  readonly type: OperationalEventType;
  readonly object: Readonly<Record<string, string | number | null>>;
}

/** A notice as the outbox stores it: an event of the operations workspace. */
export interface OperationalEvent {
  readonly id: string;
  readonly type: OperationalEventType;
  readonly apiVersion: string;
  /** The exact bytes every attempt sends and signs, shaped as any notification's. */
  readonly body: string;
  readonly createdAt: number;
}

/** The notice as a notification: `{id,type,api_version,created,data:{object}}`. */
export function operationalEvent(notice: OperationalNotice, now: number): OperationalEvent {
  const createdAt = new Date(now);
  const id = newEventId(createdAt);
  const body = JSON.stringify({
    id,
    type: notice.type,
    api_version: API_VERSION,
    created: Math.floor(now / 1000),
    data: { object: notice.object },
  });
  return { id, type: notice.type, apiVersion: API_VERSION, body, createdAt: now };
}

/** `destination.failing`: the destination's circuit opened; `reason` says why, in words. */
export function destinationFailing(
  workspaceId: string,
  destinationId: string,
  circuit: { readonly reason: string; readonly openUntil: Date; readonly opens: number },
): OperationalNotice {
  return {
    type: "destination.failing",
    object: {
      workspace_id: workspaceId,
      destination_id: destinationId,
      reason: circuit.reason,
      circuit_open_until: circuit.openUntil.toISOString(),
      circuit_opens: circuit.opens,
    },
  };
}

/** `destination.recovered`: a probe was delivered and the circuit closed. */
export function destinationRecovered(
  workspaceId: string,
  destinationId: string,
): OperationalNotice {
  return {
    type: "destination.recovered",
    object: { workspace_id: workspaceId, destination_id: destinationId },
  };
}

/** `delivery.failed`: a delivery ended failed for good (its retries spent, or refused). */
export function deliveryFailed(delivery: {
  readonly workspaceId: string;
  readonly destinationId: string;
  readonly deliveryId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempts: number;
  readonly reason: string | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
}): OperationalNotice {
  return {
    type: "delivery.failed",
    object: {
      workspace_id: delivery.workspaceId,
      destination_id: delivery.destinationId,
      delivery_id: delivery.deliveryId,
      event_id: delivery.eventId,
      event_type: delivery.eventType,
      attempts: delivery.attempts,
      reason: delivery.reason,
      last_status_code: delivery.lastStatusCode,
      last_error: delivery.lastError,
    },
  };
}

/** `listen_session.ended`: a session of `svc listen` was ended by its user or expired. */
export function listenSessionEnded(
  workspaceId: string,
  sessionId: string,
  reason: string,
): OperationalNotice {
  return {
    type: "listen_session.ended",
    object: { workspace_id: workspaceId, listen_session_id: sessionId, reason },
  };
}

/** `storage.full` / `storage.recovered`: the database's writes failed for lack of space, or succeed again. */
export function storageNotice(
  type: "storage.full" | "storage.recovered",
  since: Date,
  database: "sqlite" | "postgres",
): OperationalNotice {
  return {
    type,
    object: {
      workspace_id: null,
      database,
      [type === "storage.full" ? "full_since" : "recovered_at"]: since.toISOString(),
    },
  };
}
