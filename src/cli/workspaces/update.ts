import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { metadataOf } from "./metadata-option.ts";
import { workspaceItemPath, workspaceSchema } from "./workspace-api.ts";

const COMMAND = "workspaces update";

export interface UpdateOptions extends GlobalOptions {
  readonly name?: string;
  readonly metadata?: readonly string[];
  readonly clearMetadata?: boolean;
}

/**
 * Renames a workspace or replaces its metadata (the API's PATCH: `--metadata` replaces the
 * whole object, as the pairs given; `--clear-metadata` empties it). Nothing to change is a
 * usage error here rather than a request the API would refuse.
 */
export async function updateWorkspace(
  options: UpdateOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  if (options.clearMetadata === true && options.metadata !== undefined) {
    throw usageError(
      COMMAND,
      "--metadata replaces the whole object and --clear-metadata empties it: give one of them.",
    );
  }
  const metadata =
    options.clearMetadata === true
      ? {}
      : options.metadata === undefined
        ? undefined
        : metadataOf(options.metadata, COMMAND);
  if (options.name === undefined && metadata === undefined) {
    throw usageError(
      COMMAND,
      "Nothing to change: give --name, --metadata key=value or --clear-metadata.",
    );
  }
  const body = {
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(metadata === undefined ? {} : { metadata }),
  };
  const client = await openClient(options, io);
  const request: ApiRequest = { method: "PATCH", path: workspaceItemPath(id, COMMAND), body };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  return { data: parseBody(workspaceSchema, response), raw: response.text };
}
