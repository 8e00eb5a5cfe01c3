import { checkedBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { deliveryPath, deliveryShape } from "./delivery.ts";

const COMMAND = "deliveries retry";

export interface RetryOptions extends GlobalOptions {
  readonly idempotencyKey?: string;
}

/**
 * Queues one delivery again, due now: the same body under the same Webhook-Id, freshly signed,
 * on a retry schedule started over. The API answers with the delivery, `pending`.
 */
export async function retryDelivery(
  options: RetryOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const key = idempotencyKey(options.idempotencyKey, COMMAND);
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: `${deliveryPath(session.workspace, id, COMMAND)}/retry`,
    headers: { "Idempotency-Key": key },
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  const delivery = await checkedBody(deliveryShape, response);
  return {
    data: delivery,
    raw: response.text,
    notes: [`Queued again; follow it with \`svc deliveries get ${delivery.id}\`.`],
  };
}
