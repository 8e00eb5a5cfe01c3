import { EVENT_TYPES, type EventType } from "../../interfaces.ts";
import { checkedBody } from "../client/api-paths.ts";
import type { ApiRequest } from "../client/http.ts";
import { idempotencyKey } from "../client/idempotency-key.ts";
import { openSession } from "../client/session.ts";
import { dryRunResult } from "../dry-run.ts";
import { readsStdin, type GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import type { CommandResult } from "../output.ts";
import { isRecord } from "../render/values.ts";
import { readJsonObject } from "../stdin-json.ts";
import { usageError } from "../usage.ts";
import { displayedEvent, eventSummaryShape, eventsPath } from "./event.ts";
import { fixtureFor } from "./fixtures.ts";

const COMMAND = "events send";

export interface SendOptions extends GlobalOptions {
  readonly type?: string;
  readonly data?: string;
  readonly destination?: string;
  readonly idempotencyKey?: string;
}

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
  const event = await checkedBody(eventSummaryShape, response);
  return { data: event, displayed: displayedEvent(event), raw: response.text };
}
