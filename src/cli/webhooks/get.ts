import type { Command } from "commander";
import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import {
  DESTINATION_FIELDS,
  destinationWithDeliverySchema,
  webhookPath,
  withoutSecret,
} from "./destination.ts";
import { parseBody } from "../client/api-paths.ts";

const COMMAND = "webhooks get";

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: [...DESTINATION_FIELDS, "last_delivery", "circuit"],
  output: "result",
};

/** One destination's configuration and the outcome of its latest delivery (or none). */
export async function getWebhook(
  options: GlobalOptions,
  id: string,
  io: CliIo,
): Promise<CommandResult> {
  const session = await openSession(options, io);
  const request: ApiRequest = { method: "GET", path: webhookPath(session.workspace, id, COMMAND) };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  return {
    data: withoutSecret(parseBody(destinationWithDeliverySchema, response)),
    raw: response.text,
  };
}

export function registerGet(group: Command, io: CliIo): void {
  group
    .command("get")
    .description("show one destination: its configuration and last_delivery")
    .argument("<id>", "the destination's id (dst_…)")
    .addHelpText(
      "after",
      `
last_delivery is "none" (null in JSON) until a delivery has been recorded; otherwise it holds
status (pending, delivered or failed), attempts, last_attempt_at and event. circuit is the
destination's: closed, open (nothing is sent until open_until) or half_open (one attempt at a
time probes it), with how many times in a row it opened and why. A retry or a recovery makes
an open circuit half-open at once. The signing secret is never shown.

Examples:
  $ svc webhooks get dst_5f0c2a9e81b34d7c6a1e0f93
  $ svc webhooks get dst_5f0c2a9e81b34d7c6a1e0f93 --format yaml
  $ svc webhooks get dst_5f0c2a9e81b34d7c6a1e0f93 --field url`,
    )
    .action(
      action<GlobalOptions>(io, settings, (options, [id = ""]) => getWebhook(options, id, io)),
    );
}
