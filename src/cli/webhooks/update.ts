import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import { destinationShape, webhookPath, withoutSecret } from "./destination.ts";
import { checkedBody } from "../client/api-paths.ts";
import { destinationBody, type DestinationFlags } from "./destination-input.ts";

const COMMAND = "webhooks update";

export type UpdateOptions = GlobalOptions & DestinationFlags & { readonly idempotencyKey?: string };

/**
 * Changes the members supplied and preserves the others. Nothing supplied, or `{}`, is a usage
 * error raised before any request. The signing secret cannot be changed or read here.
 */
export async function updateWebhook(
  options: UpdateOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const body = await destinationBody(options, options, io, COMMAND, ["url", "events", "active"]);
  if (Object.keys(body).length === 0) {
    throw usageError(
      COMMAND,
      "Nothing to update: give at least one of --url, --events or --active (or url, events or active in the --stdin JSON).",
    );
  }
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "PATCH",
    path: webhookPath(session.workspace, id, COMMAND),
    body,
    headers: { "Idempotency-Key": idempotencyKey(options.idempotencyKey, COMMAND) },
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  return { data: withoutSecret(await checkedBody(destinationShape, response)), raw: response.text };
}
