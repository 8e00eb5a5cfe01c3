import type { ApiRequest } from "../client/http.ts";
import { zodShape } from "../client/answer-shape.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { resolveWorkspace } from "../workspace.ts";
import { apiKeySchema, KEY_FIELDS, keysPath } from "./key-api.ts";

const COMMAND = "keys list";

/** The workspace's keys in use, newest first, with their last use; never a token. */
export async function listKeys(options: GlobalOptions, io: CliIo): Promise<CommandResult> {
  const workspace = resolveWorkspace(options.workspace, io.env);
  const client = await openClient(options, io);
  const pageAll = options.pageAll === true;
  const request = (cursor: string | null): ApiRequest => {
    const query = pageQuery({}, pageAll, cursor);
    return {
      method: "GET",
      path: keysPath(workspace, COMMAND),
      ...(Object.keys(query).length === 0 ? {} : { query }),
    };
  };
  if (options.dryRun === true) {
    return dryRunResult(client.prepare(request(null)), pageAll ? [PAGE_ALL_DRY_RUN_NOTE] : []);
  }
  const pages = await readPages(client, zodShape(apiKeySchema), request, pageAll);
  const notes: string[] = [];
  if (pages.nextCursor !== null) {
    notes.push("More keys exist than this page shows; add --page-all to list them all.");
  }
  if (pages.items.length === 0) notes.push(`No API keys in workspace ${workspace}.`);
  return { data: pages.items, columns: KEY_FIELDS, raw: pages.bodies.join("\n"), notes };
}
