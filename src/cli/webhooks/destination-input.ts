import { AppError } from "../../errors.ts";
import type { EventSubscription } from "../../interfaces.ts";
import { parseDestinationUrl } from "../../net/destination-url.ts";
import { readsStdin, type GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { readJsonObject } from "../stdin-json.ts";
import { splitList } from "../../lib/split-list.ts";
import { usageError } from "../usage.ts";
import { asSubscriptions, eventNamesProblem } from "../../event-names.ts";

/** The flags of `create` and `update` that set a member of the destination. */
export interface DestinationFlags {
  readonly url?: string;
  /** Comma-separated event names. */
  readonly events?: string;
  /** `true` or `false` (commander admits nothing else). */
  readonly active?: string;
}

/** The request body of `create` and `update`: only the members supplied. */
export interface DestinationBody {
  url?: string;
  events?: EventSubscription[];
  active?: boolean;
}

export type DestinationMember = keyof DestinationBody;

/**
 * The body of a create or update request, from the flags and (with `--stdin`) a JSON object on
 * standard input. They combine member by member, and a flag wins over the same JSON member:
 * the JSON is the base, the command line adjusts it. Everything the command line can know is
 * checked here, before any request: the members allowed, their types, the event names, and
 * the URL's form (https, length, no credentials). Whether its host is public is the server's
 * to judge: only the server resolves it.
 */
export async function destinationBody(
  flags: DestinationFlags,
  options: GlobalOptions,
  io: CliIo,
  command: string,
  allowed: readonly DestinationMember[],
): Promise<DestinationBody> {
  const fromJson = readsStdin(options)
    ? jsonMembers(await readJsonObject(io, command), allowed, command)
    : {};
  const merged: DestinationBody = { ...fromJson, ...flagMembers(flags) };
  // Always in this order, whatever order the input had.
  const body: DestinationBody = {};
  if (merged.url !== undefined) body.url = checkedUrl(merged.url, command);
  if (merged.events !== undefined) body.events = checkedEvents(merged.events, command);
  if (merged.active !== undefined) body.active = merged.active;
  return body;
}

function flagMembers(flags: DestinationFlags): DestinationBody {
  const body: DestinationBody = {};
  if (flags.url !== undefined) body.url = flags.url;
  if (flags.events !== undefined) body.events = splitList(flags.events) as EventSubscription[];
  if (flags.active !== undefined) body.active = flags.active === "true";
  return body;
}

function jsonMembers(
  json: Readonly<Record<string, unknown>>,
  allowed: readonly DestinationMember[],
  command: string,
): DestinationBody {
  const wrong = (why: string): AppError => usageError(command, `--stdin: ${why}.`);
  const unknown = Object.keys(json).filter((key) => !(allowed as readonly string[]).includes(key));
  if (unknown.length > 0) {
    throw wrong(
      `unknown member ${unknown.map((key) => JSON.stringify(key)).join(", ")}; \`svc ${command}\` takes ${allowed.join(", ")}`,
    );
  }
  const body: DestinationBody = {};
  const { url, events, active } = json;
  if (url !== undefined) {
    if (typeof url !== "string") throw wrong("url must be a string");
    body.url = url;
  }
  if (events !== undefined) {
    if (!Array.isArray(events) || !events.every((name) => typeof name === "string")) {
      throw wrong('events must be an array of event names, such as ["job.completed"]');
    }
    body.events = events as EventSubscription[];
  }
  if (active !== undefined) {
    if (typeof active !== "boolean") throw wrong("active must be true or false");
    body.active = active;
  }
  return body;
}

function checkedUrl(url: string, command: string): string {
  try {
    parseDestinationUrl(url);
  } catch (error) {
    if (error instanceof AppError) throw usageError(command, error.message);
    throw error;
  }
  return url;
}

function checkedEvents(events: readonly string[], command: string): EventSubscription[] {
  const problem = eventNamesProblem(events);
  if (problem !== null) throw usageError(command, problem);
  return asSubscriptions(events);
}
