import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openClient } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { requireOption } from "../usage.ts";
import { metadataOf } from "./metadata-option.ts";
import { WORKSPACES_PATH, workspaceSchema } from "./workspace-api.ts";

const COMMAND = "workspaces create";

export interface CreateOptions extends GlobalOptions {
  readonly name?: string;
  readonly externalId?: string;
  readonly metadata?: readonly string[];
  readonly idempotencyKey?: string;
}

/**
 * A new workspace. It carries an Idempotency-Key (the one given, else a new one) as `webhooks
 * create` does: a lost answer is asked again and replayed, never a second workspace; the same
 * key given again later answers the first workspace.
 */
export async function createWorkspace(options: CreateOptions, io: CliIo): Promise<CommandResult> {
  const name = requireOption(options.name, COMMAND, "A workspace needs --name <name>.");
  const body = {
    name,
    ...(options.externalId === undefined ? {} : { external_id: options.externalId }),
    ...(options.metadata === undefined ? {} : { metadata: metadataOf(options.metadata, COMMAND) }),
  };
  const key = idempotencyKey(options.idempotencyKey, COMMAND);
  const client = await openClient(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: WORKSPACES_PATH,
    body,
    headers: { "Idempotency-Key": key },
  };
  if (options.dryRun === true) return dryRunResult(client.prepare(request));
  const response = await client.send(request);
  return { data: parseBody(workspaceSchema, response), raw: response.text };
}
