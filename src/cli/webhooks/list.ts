import type { Command } from "commander";
import { AppError } from "../../errors.ts";
import { openSession } from "../client/session.ts";
import type { ApiRequest } from "../client/http.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { DESTINATION_FIELDS, listPageSchema, webhooksPath, withoutSecret } from "./destination.ts";
import { parseBody } from "../client/api-paths.ts";

const COMMAND = "webhooks list";

/** --page-all asks for the API's largest page: the fewest round trips. */
const PAGE_ALL_LIMIT = "100";

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: DESTINATION_FIELDS,
  output: "result",
};

/**
 * The workspace's destinations, newest first: one page (the API's default size) and a hint on
 * stderr when there are more, or with `--page-all` every page, following `next_cursor`.
 * `--raw` prints each page's body as received, one per line.
 */
export async function listWebhooks(options: GlobalOptions, io: CliIo): Promise<CommandResult> {
  const session = await openSession(options, io);
  const pageAll = options.pageAll === true;
  const request = (cursor: string | null): ApiRequest => ({
    method: "GET",
    path: webhooksPath(session.workspace, COMMAND),
    ...(pageAll
      ? { query: { limit: PAGE_ALL_LIMIT, ...(cursor === null ? {} : { cursor }) } }
      : {}),
  });
  if (options.dryRun === true) {
    const more =
      "With --page-all, each further page would be asked for with the previous page's next_cursor.";
    return dryRunResult(session.prepare(request(null)), pageAll ? [more] : []);
  }
  const destinations: Record<string, unknown>[] = [];
  const bodies: string[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  do {
    const response = await session.send(request(cursor));
    const page = parseBody(listPageSchema, response);
    destinations.push(...page.data.map(withoutSecret));
    bodies.push(response.text);
    cursor = page.next_cursor;
    if (cursor !== null && cursors.has(cursor)) {
      throw new AppError("bad_response", "The API repeated a pagination cursor; stopping.");
    }
    if (cursor !== null) cursors.add(cursor);
  } while (pageAll && cursor !== null);
  const notes: string[] = [];
  if (cursor !== null) {
    notes.push("More destinations exist than this page shows; add --page-all to list them all.");
  }
  if (destinations.length === 0) {
    notes.push(`No webhook destinations in workspace ${session.workspace}.`);
  }
  return { data: destinations, columns: DESTINATION_FIELDS, raw: bodies.join("\n"), notes };
}

export function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's destinations: id, url, events, active and timestamps")
    .addHelpText(
      "after",
      `
Prints the first page (newest first) and says on stderr when there are more; --page-all
follows every page. Signing secrets are never shown. --json prints {"ok":true,"data":[…]}.

Examples:
  $ svc webhooks list
  $ svc webhooks list --page-all --json
  $ svc webhooks list --fields id,url,active
  $ svc webhooks list --page-all --field id`,
    )
    .action(action<GlobalOptions>(io, settings, (options) => listWebhooks(options, io)));
}
