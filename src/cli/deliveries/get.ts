import type { Command } from "commander";
import { deliveryDetailSchema, type DeliveryDetailBody } from "../../contract/delivery-log.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import {
  attemptLines,
  DELIVERY_DETAIL_FIELDS,
  deliveryPath,
  nextAttempt,
  standing,
} from "./delivery.ts";

const COMMAND = "deliveries get";

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: DELIVERY_DETAIL_FIELDS,
  output: "result",
};

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
  const delivery = parseBody(deliveryDetailSchema, response);
  return { data: delivery, human: describeDelivery(delivery), raw: response.text };
}

export function registerGet(group: Command, io: CliIo): void {
  group
    .command("get")
    .description("show one delivery and its log: one line per attempt")
    .argument("<id>", "the delivery's id (dlv_…)")
    .addHelpText(
      "after",
      `
Shows the delivery's event (and whether it is a test event), destination, status, where it
stands (waiting, in_flight, retry_scheduled, circuit_open, delivered, or failed with its
reason: retries exhausted, circuit open, destination refused, deleted or inactive), its next
attempt and last error, then one line per attempt, oldest first: when, its number, the
receiver's status code (--- when none came), how long it took, and the first line of the
receiver's answer (at most 2 KiB of it is kept) or the error.
--json gives the whole of each attempt (attempts[], and attempt_count). A delivery older than
the server keeps events is delivery_expired (exit 5). Needs the events:read scope.

Examples:
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --json
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --field status`,
    )
    .action(
      action<GlobalOptions>(io, settings, (options, [id = ""]) => getDelivery(options, id, io)),
    );
}
