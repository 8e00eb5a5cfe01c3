import type { ApiRequest } from "../client/http.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { destinationWithDeliveryShape, webhookPath, withoutSecret } from "./destination.ts";
import { checkedBody } from "../client/api-paths.ts";

const COMMAND = "webhooks get";

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
    data: withoutSecret(await checkedBody(destinationWithDeliveryShape, response)),
    raw: response.text,
  };
}
