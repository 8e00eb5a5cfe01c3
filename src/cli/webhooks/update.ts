import { Option, type Command } from "commander";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey, idempotencyKeyOption } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { usageError } from "../usage.ts";
import {
  DESTINATION_FIELDS,
  destinationSchema,
  webhookPath,
  withoutSecret,
} from "./destination.ts";
import { parseBody } from "../client/api-paths.ts";
import { destinationBody, type DestinationFlags } from "./destination-input.ts";

const COMMAND = "webhooks update";

export type UpdateOptions = GlobalOptions & DestinationFlags & { readonly idempotencyKey?: string };

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "stdin", "timing"],
  fields: DESTINATION_FIELDS,
  output: "result",
};

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
  return { data: withoutSecret(parseBody(destinationSchema, response)), raw: response.text };
}

export function registerUpdate(group: Command, io: CliIo): void {
  group
    .command("update")
    .description("change a destination's url, events or active state; the rest is preserved")
    .argument("<id>", "the destination's id (dst_…)")
    .option("--url <https-url>", "new destination URL: https://, at most 2048 characters")
    .addOption(idempotencyKeyOption())
    .option(
      "--events <csv>",
      "new comma-separated events: *, job.completed, job.failed, collection.completed",
    )
    .addOption(
      new Option("--active <true|false>", "false pauses deliveries; true resumes them").choices([
        "true",
        "false",
      ]),
    )
    .addHelpText(
      "after",
      `
At least one of --url, --events, --active is required (an empty --stdin object is refused).
With --stdin, a JSON object {"url", "events", "active"} is read from standard input; a flag
given as well wins over the same member of the JSON. The signing secret cannot be changed or
read: to replace it, create a new destination and delete this one.

Examples:
  $ svc webhooks update dst_5f0c2a9e81b34d7c6a1e0f93 --active false
  $ svc webhooks update dst_5f0c2a9e81b34d7c6a1e0f93 --events job.failed --url https://example.com/v2
  $ echo '{"active": true}' | svc webhooks update dst_5f0c2a9e81b34d7c6a1e0f93 --stdin`,
    )
    .action(
      action<UpdateOptions>(io, settings, (options, [id = ""]) => updateWebhook(options, id, io)),
    );
}
