import type { Command } from "commander";
import { SCOPES } from "../../interfaces.ts";
import { idempotencyKeyOption } from "../client/idempotency-key.ts";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { OPERATOR_KEY_HELP } from "../workspaces/workspaces-commands.ts";
import type { CreateOptions } from "./create.ts";

/**
 * `svc keys`: a workspace's API keys over the platform API (decision 42), for an operator key.
 * `svc admin keys` stays the host's way, on the database. Bodies are imported when they run.
 */

const LIST: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "pageAll", "timing"],
  fields: async () => (await import("./key-api.ts")).KEY_FIELDS,
  output: "result",
};
const CREATE: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => [...(await import("./key-api.ts")).KEY_FIELDS, "key_file"],
  output: "secret",
};
const REVOKE: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: ["id", "deleted"],
  output: "result",
};

export function registerKeyCommands(program: Command, io: CliIo): void {
  const group = program
    .command("keys")
    .description("mint, list and revoke a workspace's API keys over the platform API")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
${OPERATOR_KEY_HELP}
The workspace is --workspace, else SERVICE_WORKSPACE_ID. On the server's host, "svc admin
keys" does the same on the database, and makes operator keys.

Examples:
  $ svc keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes webhooks:write,events:write \\
      --name backend --output acme.key
  $ svc keys list --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc keys revoke key_ef6e4e78267cdc566fe1b90d --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12`,
    );

  group
    .command("list")
    .description("list a workspace's keys in use: scopes, name, expiry, last use (no token)")
    .addHelpText(
      "after",
      `
Newest first; revoked keys are not listed. last_used_at is up to a minute old. A key's token
is never shown: the API does not keep it.

Examples:
  $ svc keys list --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc keys list --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --page-all --json
  $ svc keys list --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --fields id,name,last_used_at`,
    )
    .action(
      action<GlobalOptions>(io, LIST, async (options) =>
        (await import("./list.ts")).listKeys(options, io),
      ),
    );

  group
    .command("create")
    .description("mint a workspace's API key; its token is saved to the --output file")
    .option("--scopes <csv>", `comma-separated: ${SCOPES.join(", ")} (required)`)
    .option("--name <name>", "what the key is for, for people")
    .option("--expires-at <time>", "when it stops working: an ISO 8601 time with a zone")
    .option("--expires-in <duration>", "when it stops working, from now: 90d, 12h, 2w")
    .addOption(idempotencyKeyOption())
    .usage("--workspace <id> --scopes <csv> --output <file> [options]")
    .addHelpText(
      "after",
      `
--output <file> (required) is the new file the key (svc_…) is saved to: created before the
request is sent, never overwritten, never through a symlink, mode 0600, so a bad path mints
nothing. The token is never printed, not even with --raw or --dry-run; stdout shows the key
without it. Without an expiry the key works until it is revoked.

Examples:
  $ svc keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes webhooks:write,events:write \\
      --output acme.key
  $ svc keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes events:read --name reporting \\
      --expires-in 90d --output reporting.key --json
  $ svc keys create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --scopes events:write --output k.key --dry-run`,
    )
    .action(
      action<CreateOptions>(io, CREATE, async (options) =>
        (await import("./create.ts")).createKey(options, io),
      ),
    );

  group
    .command("revoke")
    .description("revoke a workspace's API key at once")
    .argument("<key-id>", "the key's id (key_…)")
    .addHelpText(
      "after",
      `
The key stops working with the next request that carries it. Prints "deleted: true".

Examples:
  $ svc keys revoke key_ef6e4e78267cdc566fe1b90d --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc keys revoke key_ef6e4e78267cdc566fe1b90d --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --json`,
    )
    .action(
      action<GlobalOptions>(io, REVOKE, async (options, [id = ""]) =>
        (await import("./revoke.ts")).revokeKey(options, id, io),
      ),
    );
}
