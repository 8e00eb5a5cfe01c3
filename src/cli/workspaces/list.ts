import type { ApiRequest } from "../client/http.ts";
import { zodShape } from "../client/answer-shape.ts";
import { PAGE_ALL_DRY_RUN_NOTE, pageQuery, readPages } from "../client/pages.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { WORKSPACE_FIELDS, WORKSPACES_PATH, workspaceSchema } from "./workspace-api.ts";

const COMMAND = "workspaces list";

export interface ListOptions extends GlobalOptions {
  readonly externalId?: string;
  readonly limit?: string;
  /** Same as --page-all. */
  readonly all?: boolean;
}

/** `--limit`: the size of the one page asked for, within the API's bounds. */
function pageSize(limit: string, command: string): string {
  const size = Number(limit);
  if (!/^\d{1,3}$/.test(limit.trim()) || size < 1 || size > 100) {
    throw usageError(command, `--limit must be a whole number from 1 to 100, not ${limit}.`);
  }
  return String(size);
}

/**
 * The server's workspaces, newest first: one page and a hint when there are more, or every
 * page with `--all`. `--external-id` finds the one with the platform's id (a list of one or
 * none, so that a script reads the same shape either way).
 */
export async function listWorkspaces(options: ListOptions, io: CliIo): Promise<CommandResult> {
  const pageAll = options.all === true || options.pageAll === true;
  if (pageAll && options.limit !== undefined) {
    throw usageError(
      COMMAND,
      "--limit sets the size of the one page shown; --all reads every page: give one of them.",
    );
  }
  const filters: Record<string, string> = {
    ...(options.externalId === undefined ? {} : { external_id: options.externalId }),
    ...(options.limit === undefined ? {} : { limit: pageSize(options.limit, COMMAND) }),
  };
  const client = await openClient(options, io);
  const request = (cursor: string | null): ApiRequest => {
    const query = pageQuery(filters, pageAll, cursor);
    return {
      method: "GET",
      path: WORKSPACES_PATH,
      ...(Object.keys(query).length === 0 ? {} : { query }),
    };
  };
  if (options.dryRun === true) {
    return dryRunResult(client.prepare(request(null)), pageAll ? [PAGE_ALL_DRY_RUN_NOTE] : []);
  }
  const pages = await readPages(client, zodShape(workspaceSchema), request, pageAll);
  const notes: string[] = [];
  if (pages.nextCursor !== null) {
    notes.push("More workspaces exist than this page shows; add --all to list them all.");
  }
  if (pages.items.length === 0) {
    notes.push(
      options.externalId === undefined
        ? "No workspaces on this server."
        : `No workspace has external_id ${JSON.stringify(options.externalId)}.`,
    );
  }
  return {
    data: pages.items,
    columns: WORKSPACE_FIELDS,
    raw: pages.bodies.join("\n"),
    notes,
  };
}
