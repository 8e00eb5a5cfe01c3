import type { Command } from "commander";
import { recoverySchema } from "../../contract/delivery-log.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey, idempotencyKeyOption } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { TIME_OPTION_HELP, parseTimeOption } from "../time-option.ts";
import { requireOption } from "../usage.ts";
import { webhookPath } from "../webhooks/destination.ts";

const COMMAND = "deliveries recover";

export interface RecoverOptions extends GlobalOptions {
  readonly destination?: string;
  readonly since?: string;
  readonly idempotencyKey?: string;
}

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: ["queued"],
  output: "result",
};

/**
 * Queues again every `failed` delivery to one destination created at or after `--since`:
 * `POST …/webhooks/{dst}/recover`. The API answers with how many it queued.
 */
export async function recoverDeliveries(
  options: RecoverOptions,
  io: CliIo,
  now: Date = new Date(),
): Promise<CommandResult> {
  const destination = requireOption(
    options.destination,
    COMMAND,
    "--destination is required: the destination (dst_…) whose failed deliveries to send again.",
  );
  const since = parseTimeOption(
    requireOption(
      options.since,
      COMMAND,
      "--since is required: failed deliveries created at or after it are sent again.",
    ),
    "--since",
    COMMAND,
    now,
  );
  const key = idempotencyKey(options.idempotencyKey, COMMAND);
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: `${webhookPath(session.workspace, destination, COMMAND)}/recover`,
    body: { since },
    headers: { "Idempotency-Key": key },
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  const recovery = parseBody(recoverySchema, response);
  const notes =
    recovery.queued === 0
      ? [`No failed deliveries to ${destination} created since ${since}.`]
      : [`Follow them with \`svc deliveries list --destination ${destination} --since ${since}\`.`];
  return { data: recovery, raw: response.text, notes };
}

export function registerRecover(group: Command, io: CliIo): void {
  group
    .command("recover")
    .description("send again every failed delivery to a destination since a time")
    .option("--destination <id>", "the destination (dst_…) to recover; required")
    .option(
      "--since <time>",
      `failed deliveries created at or after: ${TIME_OPTION_HELP}; required`,
    )
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
For a receiver that was down: once it is back, every delivery to it that ended failed and was
created at or after --since is queued again, each once, with the same body under the same
Webhook-Id (receivers deduplicate). Prints how many were queued ("queued: n"). Refused for a
paused or deleted destination (destination_inactive, exit 3). Needs the events:write scope.
--dry-run prints the request, --since converted to a time, and sends nothing.

Examples:
  $ svc deliveries recover --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 2h
  $ svc deliveries recover --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 2026-11-25T00:00:00Z
  $ svc deliveries recover --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 1d --dry-run`,
    )
    .action(action<RecoverOptions>(io, settings, (options) => recoverDeliveries(options, io)));
}
