import { openSession } from "../client/session.ts";
import type { ApiRequest } from "../client/http.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import {
  DESTINATION_FIELDS,
  destinationShape,
  webhooksPath,
  withoutSecret,
} from "./destination.ts";

const COMMAND = "webhooks list";

/**
 * The workspace's destinations, newest first: one page (the API's default size) and a hint on
 * stderr when there are more, or with `--page-all` every page, following `next_cursor`.
 * `--raw` prints each page's body as received, one per line.
 */
export async function listWebhooks(options: GlobalOptions, io: CliIo): Promise<CommandResult> {
  const session = await openSession(options, io);
  const pageAll = options.pageAll === true;
  const request = (cursor: string | null): ApiRequest => {
    const query = pageQuery({}, pageAll, cursor);
    return {
      method: "GET",
      path: webhooksPath(session.workspace, COMMAND),
      ...(Object.keys(query).length === 0 ? {} : { query }),
    };
  };
  if (options.dryRun === true) {
    return dryRunResult(session.prepare(request(null)), pageAll ? [PAGE_ALL_DRY_RUN_NOTE] : []);
  }
  const pages = await readPages(session, destinationShape, request, pageAll);
  const destinations = pages.items.map(withoutSecret);
  const notes: string[] = [];
  if (pages.nextCursor !== null) {
    notes.push("More destinations exist than this page shows; add --page-all to list them all.");
  }
  if (destinations.length === 0) {
    notes.push(`No webhook destinations in workspace ${session.workspace}.`);
  }
  return { data: destinations, columns: DESTINATION_FIELDS, raw: pages.bodies.join("\n"), notes };
}
