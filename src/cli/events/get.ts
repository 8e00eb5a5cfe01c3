import type { Command } from "commander";
import { eventDetailSchema, type EventDetailBody } from "../../contract/delivery-log.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { deliveryRows } from "../deliveries/delivery.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { EVENT_DETAIL_FIELDS, eventPath, unixTime } from "./event.ts";

const COMMAND = "events get";

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: EVENT_DETAIL_FIELDS,
  output: "result",
};

/** The event, then one line per delivery (a destination it was queued for). */
function describeEvent(event: EventDetailBody): string {
  const deliveries =
    event.deliveries.length === 0
      ? ["deliveries:  none (no active destination was subscribed to its type)"]
      : [`deliveries:  ${event.deliveries.length}`, ...deliveryRows(event.deliveries, "  ")];
  return [
    `id:          ${event.id}`,
    `type:        ${event.type}`,
    `api_version: ${event.api_version}`,
    `created:     ${event.created} (${unixTime(event.created)})`,
    `data:        ${JSON.stringify(event.data)}`,
    ...deliveries,
  ].join("\n");
}

/** One notification exactly as it was sent, and its deliveries. */
export async function getEvent(
  options: GlobalOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const session = await openSession(options, io);
  const request: ApiRequest = { method: "GET", path: eventPath(session.workspace, id, COMMAND) };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  const event = parseBody(eventDetailSchema, response);
  return { data: event, human: describeEvent(event), raw: response.text };
}

export function registerGet(group: Command, io: CliIo): void {
  group
    .command("get")
    .description("show one event: the notification as sent, and one line per delivery")
    .argument("<id>", "the event's id (evt_…), the Webhook-Id its destinations received")
    .addHelpText(
      "after",
      `
Shows the notification's id, type, api_version, created and data, then its deliveries (one
per destination it was queued for): id, destination, status, attempts, the last status code
and when it was last attempted. "svc deliveries get <id>" shows a delivery's attempts. An
event older than the server keeps events is event_expired (exit 5). Needs events:read.

Examples:
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36 --json
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36 --field data`,
    )
    .action(action<GlobalOptions>(io, settings, (options, [id = ""]) => getEvent(options, id, io)));
}
