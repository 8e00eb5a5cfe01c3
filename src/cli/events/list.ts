import type { ApiRequest } from "../client/http.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { timeRange } from "../time-option.ts";
import { displayedEvent, EVENT_FIELDS, eventSummaryShape, eventsPath } from "./event.ts";

const COMMAND = "events list";

export interface ListEventsOptions extends GlobalOptions {
  readonly type?: string;
  readonly since?: string;
  readonly until?: string;
}

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
  const pages = await readPages(session, eventSummaryShape, request, pageAll);
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
  return {
    data: pages.items,
    displayed: pages.items.map(displayedEvent),
    columns: EVENT_FIELDS,
    raw: pages.bodies.join("\n"),
    notes,
  };
}
