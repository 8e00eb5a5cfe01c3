import { checkedBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { parseTimeOption } from "../time-option.ts";
import { requireOption } from "../usage.ts";
import { webhookPath } from "../webhooks/destination.ts";
import { recoveryShape } from "./delivery.ts";

const COMMAND = "deliveries recover";

export interface RecoverOptions extends GlobalOptions {
  readonly destination?: string;
  readonly since?: string;
  readonly idempotencyKey?: string;
}

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
  const recovery = await checkedBody(recoveryShape, response);
  const notes =
    recovery.queued === 0
      ? [`No failed deliveries to ${destination} created since ${since}.`]
      : [`Follow them with \`svc deliveries list --destination ${destination} --since ${since}\`.`];
  return { data: recovery, raw: response.text, notes };
}
