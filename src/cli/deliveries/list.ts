import type { ApiRequest } from "../client/http.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { timeRange } from "../time-option.ts";
import { DELIVERY_COLUMNS, deliveriesPath, deliveryShape } from "./delivery.ts";

const COMMAND = "deliveries list";

export interface ListDeliveriesOptions extends GlobalOptions {
  readonly destination?: string;
  readonly event?: string;
  readonly status?: string;
  readonly type?: string;
  readonly since?: string;
  readonly until?: string;
}

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
  const pages = await readPages(session, deliveryShape, request, pageAll);
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
