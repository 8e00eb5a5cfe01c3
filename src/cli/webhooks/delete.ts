import type { Command } from "commander";
import { AppError } from "../../errors.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey, idempotencyKeyOption } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { confirm, isInteractive } from "../prompt.ts";
import { deletionSchema, webhookPath } from "./destination.ts";
import { parseBody } from "../client/api-paths.ts";

const COMMAND = "webhooks delete";

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "yes", "timing"],
  fields: ["id", "deleted"],
  output: "result",
};

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
  return { data: parseBody(deletionSchema, response), raw: response.text };
}

export function registerDelete(group: Command, io: CliIo): void {
  group
    .command("delete")
    .description("delete a destination (asks first on a terminal; --yes skips the question)")
    .argument("<id>", "the destination's id (dst_…)")
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
On a terminal it asks for confirmation; anything but y or yes cancels. Without a terminal
(a script, CI) it refuses unless --yes is given. Prints "deleted: true" on success.

Examples:
  $ svc webhooks delete dst_5f0c2a9e81b34d7c6a1e0f93
  $ svc webhooks delete dst_5f0c2a9e81b34d7c6a1e0f93 --yes --json`,
    )
    .action(
      action<DeleteOptions>(io, settings, (options, [id = ""]) => deleteWebhook(options, id, io)),
    );
}
