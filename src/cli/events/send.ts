import type { Command } from "commander";
import { eventSummarySchema } from "../../contract/delivery-log.ts";
import { EVENT_TYPES, type EventType } from "../../interfaces.ts";
import { parseBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey, idempotencyKeyOption } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { action, type CommandSettings } from "../command.ts";
import { dryRunResult } from "../dry-run.ts";
import { readsStdin, type GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { isRecord } from "../render/values.ts";
import { readJsonObject } from "../stdin-json.ts";
import { usageError } from "../usage.ts";
import { EVENT_FIELDS, eventsPath } from "./event.ts";
import { fixtureFor } from "./fixtures.ts";

const COMMAND = "events send";

export interface SendOptions extends GlobalOptions {
  readonly type?: string;
  readonly data?: string;
  readonly destination?: string;
  readonly idempotencyKey?: string;
}

const settings: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "stdin", "timing"],
  fields: EVENT_FIELDS,
};

/** `--data` is the JSON of data.object. */
function parseData(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw usageError(COMMAND, `--data is not valid JSON (${reason}).`);
  }
  if (!isRecord(value)) throw usageError(COMMAND, "--data must be a JSON object.");
  return value;
}

/**
 * Publishes an event: `--type` and `--data` (the object the event is about), or the whole
 * body `{"type", "data": {"object"}}` on --stdin; flags win over the same members of the JSON.
 */
export async function sendEvent(options: SendOptions, io: CliIo): Promise<CommandResult> {
  const input = readsStdin(options) ? await readJsonObject(io, COMMAND) : {};
  const type = options.type ?? input.type;
  if (typeof type !== "string" || !(EVENT_TYPES as readonly string[]).includes(type)) {
    throw usageError(
      COMMAND,
      `--type must be one of: ${EVENT_TYPES.join(", ")}${type === undefined ? "" : ` (not ${JSON.stringify(type)})`}.`,
    );
  }
  const stdinObject = isRecord(input.data) ? input.data.object : undefined;
  const object =
    options.data === undefined
      ? (stdinObject ?? fixtureFor(type as EventType))
      : parseData(options.data);
  if (!isRecord(object)) throw usageError(COMMAND, "data.object must be a JSON object.");
  const session = await openSession(options, io);
  const request: ApiRequest = {
    method: "POST",
    path: eventsPath(session.workspace, COMMAND),
    body: {
      type,
      data: { object },
      ...(options.destination === undefined ? {} : { destination: options.destination }),
    },
    headers: { "Idempotency-Key": idempotencyKey(options.idempotencyKey, COMMAND) },
  };
  if (options.dryRun === true) return dryRunResult(session.prepare(request));
  const response = await session.send(request);
  return { data: parseBody(eventSummarySchema, response), raw: response.text };
}

export function registerSend(group: Command, io: CliIo): void {
  group
    .command("send")
    .description("publish one event: every active destination subscribed to its type is notified")
    .option("--type <type>", `the event type: ${EVENT_TYPES.join(", ")}`)
    .option(
      "--data <json>",
      "the JSON object the event is about (data.object); default: a sample of the type",
    )
    .option(
      "--destination <id>",
      "a test event: send it to this destination alone (dst_…), whatever it subscribes to",
    )
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
The event and one delivery per matching destination are committed before svc returns; the
notification id (evt_…) it prints is the Webhook-Id every destination receives. Needs the
events:write scope. With --stdin, reads {"type": "...", "data": {"object": {...}}}. Without
--data, data.object is a sample of the type (new ids each time): with svc listen, one command
exercises your receiver. With --destination, a test event goes to that one destination only
(it must be active), signed and retried as any notification; the log shows it as a test.

Examples:
  $ svc events send --type job.completed --data '{"id":"job_42","status":"done"}'
  $ svc events send --type job.failed          # a sample job.failed, e.g. for svc listen
  $ svc events send --type job.completed --destination dst_5f0c2a9e81b34d7c6a1e0f93  # a test
  $ echo '{"type":"job.failed","data":{"object":{"id":"job_7"}}}' | svc events send --stdin`,
    )
    .action(action<SendOptions>(io, settings, (options) => sendEvent(options, io)));
}
