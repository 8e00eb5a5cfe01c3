import type { Command } from "commander";
import { deliverySchema } from "../../contract/delivery-log.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey, idempotencyKeyOption } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { DELIVERY_FIELDS, deliveryPath } from "./delivery.ts";

const COMMAND = "deliveries retry";

export interface RetryOptions extends GlobalOptions {
  readonly idempotencyKey?: string;
}

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: DELIVERY_FIELDS,
  output: "result",
};

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
  const delivery = parseBody(deliverySchema, response);
  return {
    data: delivery,
    raw: response.text,
    notes: [`Queued again; follow it with \`svc deliveries get ${delivery.id}\`.`],
  };
}

export function registerRetry(group: Command, io: CliIo): void {
  group
    .command("retry")
    .description("send one delivery again now: same body, same Webhook-Id, freshly signed")
    .argument("<id>", "the delivery's id (dlv_…)")
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
Any delivery can be sent again, a delivered one too: receivers deduplicate by Webhook-Id.
Its retry schedule starts over and its attempts so far are kept. Prints the delivery, now
pending. Refused while a worker is attempting it (delivery_in_flight: look again in a few
seconds) and when its destination is paused or deleted (destination_inactive), both exit 3.
Needs the events:write scope. --dry-run prints the request and sends nothing.

Examples:
  $ svc deliveries retry dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries retry dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --dry-run
  $ svc deliveries list --status failed --field id | xargs -n 1 svc deliveries retry`,
    )
    .action(
      action<RetryOptions>(io, settings, (options, [id = ""]) => retryDelivery(options, id, io)),
    );
}
