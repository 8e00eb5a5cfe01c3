import { Option, type Command } from "commander";
import { eventSummarySchema } from "../../contract/delivery-log.ts";
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
import { EVENT_FIELDS, eventsPath } from "./event.ts";

const COMMAND = "events list";

export interface ListEventsOptions extends GlobalOptions {
  readonly type?: string;
  readonly since?: string;
  readonly until?: string;
}

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: EVENT_FIELDS,
  output: "result",
};

/**
 * The workspace's events, newest first, filtered by type and time: one page (the API's default
 * size) and a hint on stderr when there are more, or with `--page-all` every page. `--raw`
 * prints each page's body as received, one per line.
 */
export async function listEvents(
  options: ListEventsOptions,
  io: CliIo,
  now: Date = new Date(),
): Promise<CommandResult> {
  const filters = {
    ...(options.type === undefined ? {} : { type: options.type }),
    ...timeRange(options, COMMAND, now),
  };
  const session = await openSession(options, io);
  const pageAll = options.pageAll === true;
  const request = (cursor: string | null): ApiRequest => ({
    method: "GET",
    path: eventsPath(session.workspace, COMMAND),
    query: pageQuery(filters, pageAll, cursor),
  });
  if (options.dryRun === true) {
    return dryRunResult(session.prepare(request(null)), pageAll ? [PAGE_ALL_DRY_RUN_NOTE] : []);
  }
  const pages = await readPages(session, eventSummarySchema, request, pageAll);
  const notes: string[] = [];
  if (pages.nextCursor !== null) {
    notes.push("More events exist than this page shows; add --page-all to list them all.");
  }
  if (pages.items.length === 0) {
    notes.push(
      Object.keys(filters).length === 0
        ? `No events in workspace ${session.workspace}.`
        : `No events in workspace ${session.workspace} match these filters.`,
    );
  }
  return { data: pages.items, columns: EVENT_FIELDS, raw: pages.bodies.join("\n"), notes };
}

export function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's events, newest first: id, type, api_version, created")
    .addOption(new Option("--type <type>", "only events of this type").choices(EVENT_TYPES))
    .option("--since <time>", `only events created at or after this time: ${TIME_OPTION_HELP}`)
    .option("--until <time>", `only events created before this time: ${TIME_OPTION_HELP}`)
    .addHelpText(
      "after",
      `
Prints the first page (newest first) and says on stderr when there are more; --page-all
follows every page. created is in Unix seconds, as in the notification. Events are kept for
the server's eventRetention (30 days by default). Needs the events:read scope.

Examples:
  $ svc events list
  $ svc events list --type job.failed --since 2h
  $ svc events list --since 2026-11-25T00:00:00Z --until 2026-11-26T00:00:00Z --page-all --json
  $ svc events list --since 7d --page-all --field id`,
    )
    .action(action<ListEventsOptions>(io, settings, (options) => listEvents(options, io)));
}
