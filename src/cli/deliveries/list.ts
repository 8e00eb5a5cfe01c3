import { Option, type Command } from "commander";
import { deliverySchema } from "../../contract/delivery-log.ts";
import { EVENT_TYPES } from "../../interfaces.ts";
import type { ApiRequest } from "../client/http.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { TIME_OPTION_HELP, timeRange } from "../time-option.ts";
import {
  DELIVERY_COLUMNS,
  DELIVERY_FIELDS,
  DELIVERY_STATUSES,
  deliveriesPath,
} from "./delivery.ts";

const COMMAND = "deliveries list";

export interface ListDeliveriesOptions extends GlobalOptions {
  readonly destination?: string;
  readonly event?: string;
  readonly status?: string;
  readonly type?: string;
  readonly since?: string;
  readonly until?: string;
}

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: DELIVERY_FIELDS,
  output: "result",
};

/**
 * The workspace's deliveries, newest first, filtered by destination, event, status, event type
 * and time:
 * one page (the API's default size) and a hint on stderr when there are more, or with
 * `--page-all` every page. `--raw` prints each page's body as received, one per line.
 */
export async function listDeliveries(
  options: ListDeliveriesOptions,
  io: CliIo,
  now: Date = new Date(),
): Promise<CommandResult> {
  const filters = {
    ...(options.destination === undefined ? {} : { destination: options.destination }),
    ...(options.event === undefined ? {} : { event: options.event }),
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.type === undefined ? {} : { type: options.type }),
    ...timeRange(options, COMMAND, now),
  };
  const session = await openSession(options, io);
  const pageAll = options.pageAll === true;
  const request = (cursor: string | null): ApiRequest => ({
    method: "GET",
    path: deliveriesPath(session.workspace, COMMAND),
    query: pageQuery(filters, pageAll, cursor),
  });
  if (options.dryRun === true) {
    return dryRunResult(session.prepare(request(null)), pageAll ? [PAGE_ALL_DRY_RUN_NOTE] : []);
  }
  const pages = await readPages(session, deliverySchema, request, pageAll);
  const notes: string[] = [];
  if (pages.nextCursor !== null) {
    notes.push("More deliveries exist than this page shows; add --page-all to list them all.");
  }
  if (pages.items.length === 0) {
    notes.push(
      Object.keys(filters).length === 0
        ? `No deliveries in workspace ${session.workspace}.`
        : `No deliveries in workspace ${session.workspace} match these filters.`,
    );
  }
  return { data: pages.items, columns: DELIVERY_COLUMNS, raw: pages.bodies.join("\n"), notes };
}

export function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's deliveries, newest first: status, attempts, last answer")
    .option("--destination <id>", "only deliveries to this destination (dst_…)")
    .option("--event <id>", "only deliveries of this event (evt_…)")
    .addOption(
      new Option("--status <status>", "only deliveries in this status").choices(DELIVERY_STATUSES),
    )
    .addOption(
      new Option("--type <type>", "only deliveries of events of this type").choices(EVENT_TYPES),
    )
    .option("--since <time>", `only deliveries created at or after this time: ${TIME_OPTION_HELP}`)
    .option("--until <time>", `only deliveries created before this time: ${TIME_OPTION_HELP}`)
    .addHelpText(
      "after",
      `
A delivery is one event to one destination: pending (queued, or waiting for its next
attempt), delivered (a 2xx was received) or failed (its retries are spent). The table shows
id, event_type, status, state, failure_reason, attempts, last_status_code, destination_id,
created_at and test (true for a test event's: svc events send --destination); --json and
--fields give every member (next_attempt_at, last_error, in_flight…). Prints the first page
and says on stderr when there are more; --page-all follows every page. Needs the events:read
scope.

Examples:
  $ svc deliveries list --status failed
  $ svc deliveries list --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 2h
  $ svc deliveries list --event evt_01a1fea3869b5b1f7c0d9e2a4b36 --json
  $ svc deliveries list --status failed --since 1d --page-all --field id`,
    )
    .action(action<ListDeliveriesOptions>(io, settings, (options) => listDeliveries(options, io)));
}
