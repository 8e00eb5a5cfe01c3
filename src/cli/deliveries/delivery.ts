import type {
  AttemptBody,
  DeliveryBody,
  DeliveryDetailBody,
  recoverySchema,
} from "../../contract/delivery-log.ts";
import type { z } from "zod";
import {
  arrayOf,
  isBoolean,
  isInteger,
  isString,
  nullable,
  objectOf,
  oneOf,
  recordOf,
  type AnswerShape,
  type Guard,
  type ObjectGuard,
} from "../client/answer-shape.ts";
import { pathSegment, workspacePath } from "../client/api-paths.ts";
import { plainStyle } from "../render/colour.ts";
import { renderTable } from "../render/table.ts";

/**
 * The deliveries of the delivery log as the command line reads them (CONTRACT.md "Delivery
 * log and recovery"): the answers of the contract's schemas (src/contract/delivery-log.ts),
 * checked by guards that load no zod (`answer-shape.ts`).
 */

const contract = () => import("../../contract/delivery-log.ts");

const deliveryMembers = {
  id: isString,
  event_id: isString,
  destination_id: isString,
  event_type: isString,
  status: oneOf(["pending", "delivered", "failed"]),
  attempts: isInteger,
  created_at: isString,
  last_attempt_at: nullable(isString),
  next_attempt_at: nullable(isString),
  last_status_code: nullable(isInteger),
  last_error: nullable(isString),
  in_flight: isBoolean,
  state: oneOf(["waiting", "in_flight", "retry_scheduled", "circuit_open", "delivered", "failed"]),
  failure_reason: nullable(
    oneOf([
      "retries_exhausted",
      "circuit_open",
      "destination_refused",
      "destination_deleted",
      "destination_inactive",
    ]),
  ),
  test: isBoolean,
};

export const isDelivery: ObjectGuard<DeliveryBody> = objectOf(deliveryMembers);

export const deliveryShape: AnswerShape<DeliveryBody> = {
  accepts: isDelivery,
  schema: async () => (await contract()).deliverySchema,
};

const isAttempt: Guard<AttemptBody> = objectOf({
  attempt: isInteger,
  attempted_at: isString,
  duration_ms: isInteger,
  status_code: nullable(isInteger),
  error: nullable(isString),
  response_body: nullable(isString),
  request_headers: nullable(recordOf(isString)),
});

const isDeliveryDetail: ObjectGuard<DeliveryDetailBody> = objectOf({
  ...deliveryMembers,
  attempts: arrayOf(isAttempt),
  attempt_count: isInteger,
});

export const deliveryDetailShape: AnswerShape<DeliveryDetailBody> = {
  accepts: isDeliveryDetail,
  schema: async () => (await contract()).deliveryDetailSchema,
};

export const recoveryShape: AnswerShape<z.output<typeof recoverySchema>> = {
  accepts: objectOf({ queued: isInteger }),
  schema: async () => (await contract()).recoverySchema,
};

/** Every member of a delivery, as the contract gives them. */
export const DELIVERY_FIELDS = isDelivery.members;

/** The columns of a list of deliveries for a person: what happened, to what, and when. */
export const DELIVERY_COLUMNS = [
  "id",
  "event_type",
  "status",
  "state",
  "failure_reason",
  "attempts",
  "last_status_code",
  "destination_id",
  "created_at",
  "test",
] as const;

/** `deliveries get`: a delivery, every attempt kept, and how many were made in all. */
export const DELIVERY_DETAIL_FIELDS = isDeliveryDetail.members;

export function deliveriesPath(workspace: string, command: string): string {
  return `${workspacePath(workspace, command)}/deliveries`;
}

export function deliveryPath(workspace: string, id: string, command: string): string {
  return `${deliveriesPath(workspace, command)}/${pathSegment(id, "delivery id", command)}`;
}

/** When a delivery is next attempted, in words. */
export function nextAttempt(
  delivery: Pick<DeliveryBody, "in_flight" | "next_attempt_at" | "status" | "state">,
): string {
  if (delivery.in_flight) return "now (a worker is attempting it)";
  if (delivery.next_attempt_at !== null) {
    return delivery.state === "circuit_open"
      ? `${delivery.next_attempt_at} (held by the destination's open circuit until then)`
      : delivery.next_attempt_at;
  }
  return delivery.status === "pending" ? "when a worker is free" : "none";
}

/** Where a delivery stands, in words: its state, and for a failed one why (decision 40). */
export function standing(delivery: Pick<DeliveryBody, "state" | "failure_reason">): string {
  return delivery.failure_reason === null
    ? delivery.state
    : `${delivery.state} (${delivery.failure_reason.replaceAll("_", " ")})`;
}

/** The longest summary of an attempt's answer on its line. */
const SUMMARY_LENGTH = 80;

/** The first line of the receiver's answer, else the error: what a person looks for first. */
function attemptSummary(attempt: AttemptBody): string {
  const firstLine = (text: string | null): string =>
    (text ?? "")
      .split(/\r?\n/)
      .map((line) => line.trim())
      .find((line) => line !== "") ?? "";
  const summary = firstLine(attempt.response_body) || firstLine(attempt.error);
  const characters = Array.from(summary);
  return characters.length > SUMMARY_LENGTH
    ? `${characters.slice(0, SUMMARY_LENGTH - 1).join("")}…`
    : summary;
}

/**
 * One line per attempt, oldest first, columns aligned:
 * `2026-11-25T09:01:02.123Z  #1  503  41 ms  Service Unavailable`. No answer (a time-out, a
 * refused connection) shows `---` and the error.
 */
export function attemptLines(attempts: readonly AttemptBody[]): string[] {
  const rows = attempts.map((attempt) => [
    attempt.attempted_at,
    `#${attempt.attempt}`,
    attempt.status_code === null ? "---" : String(attempt.status_code),
    `${attempt.duration_ms} ms`,
    attemptSummary(attempt),
  ]);
  const widths = [0, 1, 2, 3].map((column) =>
    Math.max(0, ...rows.map((row) => (row[column] ?? "").length)),
  );
  return rows.map((row) =>
    row
      .map((cell, column) => {
        const width = widths[column];
        if (width === undefined) return cell; // the last column is not padded
        return column === 0 || column === 2 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join("  ")
      .trimEnd(),
  );
}

/** Deliveries as a small table within a resource's lines (`events get`), one line each. */
export function deliveryRows(deliveries: readonly DeliveryBody[], indent: string): string[] {
  const columns = [
    "id",
    "destination_id",
    "status",
    "attempts",
    "last_status_code",
    "last_attempt_at",
  ];
  return renderTable(deliveries, columns, plainStyle)
    .split("\n")
    .map((line) => `${indent}${line}`);
}
