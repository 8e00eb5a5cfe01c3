import { Option, type Command } from "commander";
import { idempotencyKeyOption } from "../client/idempotency-key.ts";
import type { CreateOptions } from "./create.ts";
import type { DeleteOptions } from "./delete.ts";
import type { UpdateOptions } from "./update.ts";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

/** `svc webhooks`: exactly five subcommands, each in its own file. */
export function registerWebhookCommands(program: Command, io: CliIo): void {
  const group = program
    .command("webhooks")
    .description("manage webhook destinations: HTTPS URLs that receive a workspace's events")
    // Exactly the five subcommands: no implicit `help` subcommand (`--help` serves).
    .helpCommand(false)
    .addHelpText(
      "after",
      `
Every subcommand talks to the API at SERVICE_API_URL (default: the API signed in to, else
http://127.0.0.1:8787) with the API key in SERVICE_API_KEY, else the credentials saved by
"svc auth login", in the workspace given by --workspace, else SERVICE_WORKSPACE_ID, else the
credentials' only workspace.
Run "svc webhooks <command> --help" for a command's options and examples.

Examples:
  $ export SERVICE_API_KEY=$(cat owner.key) SERVICE_WORKSPACE_ID=ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc webhooks create --url https://example.com/hooks --events job.completed --output whsec.txt
  $ svc webhooks list
  $ svc webhooks get dst_5f0c2a9e81b34d7c6a1e0f93
  $ svc webhooks update dst_5f0c2a9e81b34d7c6a1e0f93 --active false
  $ svc webhooks delete dst_5f0c2a9e81b34d7c6a1e0f93 --yes`,
    );
  registerList(group, io);
  registerCreate(group, io);
  registerGet(group, io);
  registerUpdate(group, io);
  registerDelete(group, io);
}

const LIST_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: async () => (await import("./destination.ts")).DESTINATION_FIELDS,
  output: "result",
};

function registerList(group: Command, io: CliIo): void {
  group
    .command("list")
    .description("list the workspace's destinations: id, url, events, active and timestamps")
    .addHelpText(
      "after",
      `
Prints the first page (newest first) and says on stderr when there are more; --page-all
follows every page. Signing secrets are never shown. --json prints {"ok":true,"data":[…]}.

Examples:
  $ svc webhooks list
  $ svc webhooks list --page-all --json
  $ svc webhooks list --fields id,url,active
  $ svc webhooks list --page-all --field id`,
    )
    .action(
      action<GlobalOptions>(io, LIST_SETTINGS, async (options) =>
        (await import("./list.ts")).listWebhooks(options, io),
      ),
    );
}

const CREATE_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "stdin", "timing"],
  fields: async () => [
    ...(await import("./destination.ts")).DESTINATION_FIELDS,
    "secret",
    "secret_file",
  ],
  output: "secret",
};

function registerCreate(group: Command, io: CliIo): void {
  group
    .command("create")
    .description("register a destination; its signing secret is saved to the --output file")
    .option("--url <https-url>", "where notifications are sent: https://, at most 2048 characters")
    .option(
      "--events <csv>",
      "comma-separated: *, job.completed, job.failed, collection.completed (default: *)",
    )
    .addOption(idempotencyKeyOption())
    .usage("--url <https-url> --output <path> [options]")
    .addHelpText(
      "after",
      `
--output <path> (required) is the new file the signing secret is saved to: created before the
request is sent, never overwritten, never through a symlink, mode 0600, and its directory must
be writable, so a bad path registers nothing. The file holds the secret alone (whsec_…, no
newline): it is the HMAC-SHA256 key that verifies notifications. Stdout shows the new
destination with the secret redacted. The destination is active at once; no test notification
is sent.

With --stdin, a JSON object {"url": "...", "events": [...]} is read from standard input;
a flag given as well wins over the same member of the JSON.

Examples:
  $ svc webhooks create --url https://example.com/hooks --output whsec.txt
  $ svc webhooks create --url https://example.com/hooks --events job.completed,job.failed \\
      --output whsec.txt --idempotency-key 9c1e7a
  $ echo '{"url":"https://example.com/hooks","events":["*"]}' | \\
      svc webhooks create --stdin --output whsec.txt --json
  $ svc webhooks create --url https://example.com/hooks --output whsec.txt --dry-run`,
    )
    .action(
      action<CreateOptions>(io, CREATE_SETTINGS, async (options) =>
        (await import("./create.ts")).createWebhook(options, io),
      ),
    );
}

const GET_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => [
    ...(await import("./destination.ts")).DESTINATION_FIELDS,
    "last_delivery",
    "circuit",
  ],
  output: "result",
};

function registerGet(group: Command, io: CliIo): void {
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
      action<GlobalOptions>(io, GET_SETTINGS, async (options, [id = ""]) =>
        (await import("./get.ts")).getWebhook(options, id, io),
      ),
    );
}

const UPDATE_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "stdin", "timing"],
  fields: async () => (await import("./destination.ts")).DESTINATION_FIELDS,
  output: "result",
};

function registerUpdate(group: Command, io: CliIo): void {
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
      action<UpdateOptions>(io, UPDATE_SETTINGS, async (options, [id = ""]) =>
        (await import("./update.ts")).updateWebhook(options, id, io),
      ),
    );
}

const DELETE_SETTINGS: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "yes", "timing"],
  fields: ["id", "deleted"],
  output: "result",
};

function registerDelete(group: Command, io: CliIo): void {
  group
    .command("delete")
    .description("delete a destination (asks first on a terminal; --yes skips the question)")
    .argument("<id>", "the destination's id (dst_…)")
    .addOption(idempotencyKeyOption())
    .addHelpText(
      "after",
      `
On a terminal it asks for confirmation; anything but y or yes cancels. Without a terminal
(a script, CI) it refuses unless --yes is given. Prints "deleted: true" on success.

Examples:
  $ svc webhooks delete dst_5f0c2a9e81b34d7c6a1e0f93
  $ svc webhooks delete dst_5f0c2a9e81b34d7c6a1e0f93 --yes --json`,
    )
    .action(
      action<DeleteOptions>(io, DELETE_SETTINGS, async (options, [id = ""]) =>
        (await import("./delete.ts")).deleteWebhook(options, id, io),
      ),
    );
}
