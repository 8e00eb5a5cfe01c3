import type { EventDetailBody } from "../../contract/delivery-log.ts";
import { checkedBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { deliveryRows } from "../deliveries/delivery.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { eventDetailShape, eventPath, unixTime } from "./event.ts";

const COMMAND = "events get";

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
    `created:     ${unixTime(event.created)}`,
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
  const event = await checkedBody(eventDetailShape, response);
  return { data: event, human: describeEvent(event), raw: response.text };
}
