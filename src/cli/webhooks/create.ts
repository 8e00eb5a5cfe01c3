import { AppError } from "../../errors.ts";
import { ExclusiveFile } from "../../lib/exclusive-file.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { errorCode, intoNewFile } from "../new-file.ts";
import type { CommandResult } from "../output.ts";
import { requireOption, usageError } from "../usage.ts";
import { createdDestinationShape, webhooksPath, withoutSecret } from "./destination.ts";
import { checkedBody } from "../client/api-paths.ts";
import { destinationBody, type DestinationFlags } from "./destination-input.ts";

const COMMAND = "webhooks create";
const REDACTED = "[redacted]";

export interface CreateOptions extends GlobalOptions, DestinationFlags {
  readonly idempotencyKey?: string;
}

/**
 * Registers a destination. The secret file is created (new, mode 0600) before the request is
 * sent, so a bad `--output` registers nothing; the secret is written to it alone, exactly as
 * issued and without a newline, so the file's whole content is the HMAC key. Stdout shows the
 * result with the secret redacted, even with `--raw`.
 */
export async function createWebhook(options: CreateOptions, io: CliIo): Promise<CommandResult> {
  const body = await destinationBody(options, options, io, COMMAND, ["url", "events"]);
  if (body.url === undefined) {
    throw usageError(
      COMMAND,
      "A destination needs --url <https-url> (or url in the --stdin JSON).",
    );
  }
  const secretFile = requireOption(
    options.output,
    COMMAND,
    "--output <path> is required: the new file the signing secret is saved to (it is issued only once).",
  );
  const key = idempotencyKey(options.idempotencyKey, COMMAND);
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: webhooksPath(session.workspace, COMMAND),
    body,
    headers: { "Idempotency-Key": key },
  };
  if (options.dryRun === true) {
    await ExclusiveFile.check(secretFile);
    return dryRunResult(session.prepare(request), [
      `The signing secret would be saved to ${secretFile}.`,
    ]);
  }
  const { destination, text } = await intoNewFile(
    secretFile,
    async () => {
      const response = await session.send(request);
      return {
        destination: await checkedBody(createdDestinationShape, response),
        text: response.text,
      };
    },
    (created) => created.destination.secret,
    (created, cause) =>
      new AppError(
        "secret_not_saved",
        `Destination ${created.destination.id} was registered, but its signing secret could not be saved to ${secretFile} (${errorCode(cause)}), and it cannot be shown again. Delete the destination (svc webhooks delete ${created.destination.id} --yes) and create it anew.`,
        { param: "output", cause },
      ),
  );
  return {
    data: { ...withoutSecret(destination), secret: REDACTED, secret_file: secretFile },
    raw: text.split(destination.secret).join(REDACTED),
    notes: [
      `Signing secret saved to ${secretFile} (mode 0600); it is issued only this once, so keep the file.`,
    ],
  };
}
