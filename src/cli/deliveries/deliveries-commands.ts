import { Option, type Command } from "commander";
import { DELIVERY_STATUSES, EVENT_TYPES } from "../../interfaces.ts";
import { idempotencyKeyOption } from "../client/idempotency-key.ts";
import { TIME_OPTION_HELP } from "../time-option-help.ts";
import type { ListDeliveriesOptions } from "./list.ts";
import type { RecoverOptions } from "./recover.ts";
import type { RetryOptions } from "./retry.ts";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

/** `svc deliveries`: the delivery log, and sending again; each subcommand in its own file. */
export function registerDeliveryCommands(program: Command, io: CliIo): void {
  const group = program
    .command("deliveries")
    .description("the delivery log: what was sent where, each attempt, and sending again")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
A delivery is one event to one destination, with the log of its attempts. Every subcommand
talks to the API as "svc webhooks" does (SERVICE_API_URL, SERVICE_API_KEY or the credentials
saved by "svc auth login", --workspace). Reading needs the events:read scope; retry and
recover need events:write.

Examples:
  $ svc deliveries list --status failed --since 2h
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries retry dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries recover --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 2h`,
    );
  registerList(group, io);
  registerGet(group, io);
  registerRetry(group, io);
  registerRecover(group, io);
}

const LIST_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: async () => (await import("./delivery.ts")).DELIVERY_FIELDS,
  output: "result",
};

function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's deliveries, newest first: status, attempts, last answer")
    .option("--destination <id>", "only deliveries to this destination (dst_…)")
    .option("--event <id>", "only deliveries of this event (evt_…)")
    .addOption(
      new Option("--status <status>", "only deliveries in this status").choices(DELIVERY_STATUSES),
    )
    .addOption(
      new Option("--type <type>", "only deliveries of events of this type").choices(EVENT_TYPES),
    )
    .option("--since <time>", `only deliveries created at or after this time: ${TIME_OPTION_HELP}`)
    .option("--until <time>", `only deliveries created before this time: ${TIME_OPTION_HELP}`)
    .addHelpText(
      "after",
      `
A delivery is one event to one destination: pending (queued, or waiting for its next
attempt), delivered (a 2xx was received) or failed (its retries are spent). The table shows
id, event_type, status, state, failure_reason, attempts, last_status_code, destination_id,
created_at and test (true for a test event's: svc events send --destination); --json and
--fields give every member (next_attempt_at, last_error, in_flight…). Prints the first page
and says on stderr when there are more; --page-all follows every page. Needs the events:read
scope.

Examples:
  $ svc deliveries list --status failed
  $ svc deliveries list --destination dst_5f0c2a9e81b34d7c6a1e0f93 --since 2h
  $ svc deliveries list --event evt_01a1fea3869b5b1f7c0d9e2a4b36 --json
  $ svc deliveries list --status failed --since 1d --page-all --field id`,
    )
    .action(
      action<ListDeliveriesOptions>(io, LIST_SETTINGS, async (options) =>
        (await import("./list.ts")).listDeliveries(options, io),
      ),
    );
}

const GET_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => (await import("./delivery.ts")).DELIVERY_DETAIL_FIELDS,
  output: "result",
};

function registerGet(group: Command, io: CliIo): void {
  group
    .command("get")
    .description("show one delivery and its log: one line per attempt")
    .argument("<id>", "the delivery's id (dlv_…)")
    .addHelpText(
      "after",
      `
Shows the delivery's event (and whether it is a test event), destination, status, where it
stands (waiting, in_flight, retry_scheduled, circuit_open, delivered, or failed with its
reason: retries exhausted, circuit open, destination refused, deleted or inactive), its next
attempt and last error, then one line per attempt, oldest first: when, its number, the
receiver's status code (--- when none came), how long it took, and the first line of the
receiver's answer (at most 2 KiB of it is kept) or the error.
--json gives the whole of each attempt (attempts[], and attempt_count). A delivery older than
the server keeps events is delivery_expired (exit 5). Needs the events:read scope.

Examples:
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --json
  $ svc deliveries get dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --field status`,
    )
    .action(
      action<GlobalOptions>(io, GET_SETTINGS, async (options, [id = ""]) =>
        (await import("./get.ts")).getDelivery(options, id, io),
      ),
    );
}

const RETRY_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => (await import("./delivery.ts")).DELIVERY_FIELDS,
  output: "result",
};

function registerRetry(group: Command, io: CliIo): void {
  group
    .command("retry")
    .description("send one delivery again now: same body, same Webhook-Id, freshly signed")
    .argument("<id>", "the delivery's id (dlv_…)")
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
Any delivery can be sent again, a delivered one too: receivers deduplicate by Webhook-Id.
Its retry schedule starts over and its attempts so far are kept. Prints the delivery, now
pending. Refused while a worker is attempting it (delivery_in_flight: look again in a few
seconds) and when its destination is paused or deleted (destination_inactive), both exit 3.
Needs the events:write scope. --dry-run prints the request and sends nothing.

Examples:
  $ svc deliveries retry dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93
  $ svc deliveries retry dlv_01a1fea3869b5b1f7c0d9e2a4b36_5f0c2a9e81b34d7c6a1e0f93 --dry-run
  $ svc deliveries list --status failed --field id | xargs -n 1 svc deliveries retry`,
    )
    .action(
      action<RetryOptions>(io, RETRY_SETTINGS, async (options, [id = ""]) =>
        (await import("./retry.ts")).retryDelivery(options, id, io),
      ),
    );
}

const RECOVER_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: ["queued"],
  output: "result",
};

function registerRecover(group: Command, io: CliIo): void {
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
    .action(
      action<RecoverOptions>(io, RECOVER_SETTINGS, async (options) =>
        (await import("./recover.ts")).recoverDeliveries(options, io),
      ),
    );
}
