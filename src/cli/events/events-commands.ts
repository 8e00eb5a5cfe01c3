import { Option, type Command } from "commander";
import { EVENT_TYPES } from "../../interfaces.ts";
import { idempotencyKeyOption } from "../client/idempotency-key.ts";
import { TIME_OPTION_HELP } from "../time-option-help.ts";
import type { ListEventsOptions } from "./list.ts";
import type { SendOptions } from "./send.ts";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

/** `svc events`: publish events and read them back, each subcommand in its own file. */
export function registerEventCommands(program: Command, io: CliIo): void {
  const group = program
    .command("events")
    .description("publish events to the workspace's webhook destinations, and look them up")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
Every subcommand talks to the API as "svc webhooks" does (SERVICE_API_URL, SERVICE_API_KEY or
the credentials saved by "svc auth login", --workspace). Publishing needs the events:write
scope, reading events:read. "svc deliveries" shows what became of each event.

Examples:
  $ svc events send --type job.completed --data '{"id":"job_42","status":"done"}'
  $ svc events list --type job.failed --since 2h
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36`,
    );
  registerSend(group, io);
  registerList(group, io);
  registerGet(group, io);
}

const SEND_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "stdin", "timing"],
  fields: async () => (await import("./event.ts")).EVENT_FIELDS,
};

function registerSend(group: Command, io: CliIo): void {
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
    .action(
      action<SendOptions>(io, SEND_SETTINGS, async (options) =>
        (await import("./send.ts")).sendEvent(options, io),
      ),
    );
}

const LIST_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: async () => (await import("./event.ts")).EVENT_FIELDS,
  output: "result",
};

function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's events, newest first: id, type, api_version, created")
    .addOption(new Option("--type <type>", "only events of this type").choices(EVENT_TYPES))
    .option("--since <time>", `only events created at or after this time: ${TIME_OPTION_HELP}`)
    .option("--until <time>", `only events created before this time: ${TIME_OPTION_HELP}`)
    .addHelpText(
      "after",
      `
Prints the first page (newest first) and says on stderr when there are more; --page-all
follows every page. created is an ISO 8601 time (Unix seconds in JSON, as in the notification). Events are kept for
the server's eventRetention (30 days by default). Needs the events:read scope.

Examples:
  $ svc events list
  $ svc events list --type job.failed --since 2h
  $ svc events list --since 2026-11-25T00:00:00Z --until 2026-11-26T00:00:00Z --page-all --json
  $ svc events list --since 7d --page-all --field id`,
    )
    .action(
      action<ListEventsOptions>(io, LIST_SETTINGS, async (options) =>
        (await import("./list.ts")).listEvents(options, io),
      ),
    );
}

const GET_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => (await import("./event.ts")).EVENT_DETAIL_FIELDS,
  output: "result",
};

function registerGet(group: Command, io: CliIo): void {
  group
    .command("get")
    .description("show one event: the notification as sent, and one line per delivery")
    .argument("<id>", "the event's id (evt_…), the Webhook-Id its destinations received")
    .addHelpText(
      "after",
      `
Shows the notification's id, type, api_version, created and data, then its deliveries (one
per destination it was queued for): id, destination, status, attempts, the last status code
and when it was last attempted. "svc deliveries get <id>" shows a delivery's attempts. An
event older than the server keeps events is event_expired (exit 5). Needs events:read.

Examples:
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36 --json
  $ svc events get evt_01a1fea3869b5b1f7c0d9e2a4b36 --field data`,
    )
    .action(
      action<GlobalOptions>(io, GET_SETTINGS, async (options, [id = ""]) =>
        (await import("./get.ts")).getEvent(options, id, io),
      ),
    );
}
