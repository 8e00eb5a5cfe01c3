import { AppError } from "../../errors.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { confirm, isInteractive } from "../prompt.ts";
import { deletionShape, webhookPath } from "./destination.ts";
import { checkedBody } from "../client/api-paths.ts";

const COMMAND = "webhooks delete";

/**
 * Deletes a destination once confirmed: by `--yes`, or by a person at the prompt. Without a
 * terminal to ask on and without `--yes`, it refuses before anything is sent.
 */
export interface DeleteOptions extends GlobalOptions {
  readonly idempotencyKey?: string;
}

export async function deleteWebhook(
  options: DeleteOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const confirmed = options.yes === true || options.dryRun === true;
  if (!confirmed && !isInteractive(io)) {
    throw new AppError(
      "confirmation_required",
      `Not deleting ${id}: there is no terminal to confirm on. Pass --yes to delete it.`,
    );
  }
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "DELETE",
    path: webhookPath(session.workspace, id, COMMAND),
    headers: { "Idempotency-Key": idempotencyKey(options.idempotencyKey, COMMAND) },
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const question = `Delete webhook destination ${id} (workspace ${session.workspace})? This cannot be undone.`;
  if (!confirmed && !(await confirm(io, question))) {
    throw new AppError("cancelled", `Cancelled: ${id} was not deleted.`);
  }
  const response = await session.send(request);
  return { data: await checkedBody(deletionShape, response), raw: response.text };
}
