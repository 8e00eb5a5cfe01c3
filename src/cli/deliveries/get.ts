import type { DeliveryDetailBody } from "../../contract/delivery-log.ts";
import { checkedBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import {
  attemptLines,
  deliveryDetailShape,
  deliveryPath,
  nextAttempt,
  standing,
} from "./delivery.ts";

const COMMAND = "deliveries get";

/** A few lines about the delivery, then its log: one line per attempt, oldest first. */
function describeDelivery(delivery: DeliveryDetailBody): string {
  const kept = delivery.attempts.length;
  const count = delivery.attempt_count;
  const attempts =
    count === kept ? String(count) : `${count} (the oldest ${count - kept} no longer kept)`;
  const header = [
    `id:           ${delivery.id}`,
    `event:        ${delivery.event_id} (${delivery.event_type}${delivery.test ? ", a test event" : ""})`,
    `destination:  ${delivery.destination_id}`,
    `status:       ${delivery.status}`,
    `state:        ${standing(delivery)}`,
    `next attempt: ${nextAttempt(delivery)}`,
    `attempts:     ${attempts}`,
    ...(delivery.last_error === null ? [] : [`last error:   ${delivery.last_error}`]),
  ];
  return [...header, ...(kept === 0 ? [] : ["", ...attemptLines(delivery.attempts)])].join("\n");
}

/** One delivery and every attempt kept of it: time, number, status code, duration, answer. */
export async function getDelivery(
  options: GlobalOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "GET",
    path: deliveryPath(session.workspace, id, COMMAND),
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  const delivery = await checkedBody(deliveryDetailShape, response);
  return { data: delivery, human: describeDelivery(delivery), raw: response.text };
}
