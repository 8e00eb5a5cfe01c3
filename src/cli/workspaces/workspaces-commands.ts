import type { Command } from "commander";
import { idempotencyKeyOption } from "../client/idempotency-key.ts";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { collectPairs } from "./metadata-option.ts";
import type { CreateOptions } from "./create.ts";
import type { DeleteOptions } from "./delete.ts";
import type { ListOptions } from "./list.ts";
import type { UpdateOptions } from "./update.ts";

/**
 * `svc workspaces`: the platform API's workspaces (decision 42), for an operator key. Each
 * command's body is imported when it runs, so `--help`, `--version` and the other commands
 * never load it.
 */

const ONE: CommandSettings = {
  accepts: ["raw", "dryRun", "timing"],
  fields: async () => (await import("./workspace-api.ts")).WORKSPACE_FIELDS,
  output: "result",
};
const LIST: CommandSettings = { ...ONE, accepts: [...ONE.accepts, "pageAll"] };
const DELETE: CommandSettings = {
  accepts: ["raw", "dryRun", "yes", "timing"],
  fields: ["id", "deleted"],
  output: "result",
};

export const OPERATOR_KEY_HELP = `Every subcommand talks to the API at SERVICE_API_URL (default http://127.0.0.1:8787) with the
operator API key in SERVICE_API_KEY (svc_op_…, made on the server's host by "svc admin keys
create --operator"); a workspace's key is refused (403 operator_key_required).`;

const metadataFlag = "--metadata <key=value>";
const metadataHelp = "a member of the workspace's metadata; repeat it for more (plan=pro)";

export function registerWorkspaceCommands(program: Command, io: CliIo): void {
  const group = program
    .command("workspaces")
    .description("manage the server's workspaces over the platform API (an operator key)")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
${OPERATOR_KEY_HELP}
Run "svc workspaces <command> --help" for a command's options and examples; "svc keys" mints
a workspace's API keys, "svc portal-link" opens its customer portal.

Examples:
  $ export SERVICE_API_URL=https://webhooks.example.com SERVICE_API_KEY=$(cat operator.key)
  $ svc workspaces create --name "Acme Corp" --external-id cus_8f2a61 --metadata plan=pro
  $ svc workspaces list --external-id cus_8f2a61 --field id
  $ svc workspaces get ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc workspaces delete ws_0b7c3d5e9f1a2b4c6d8e0f12 --cascade --yes`,
    );

  group
    .command("list")
    .description("list workspaces, newest first; --external-id finds the platform's one")
    .option("--external-id <id>", "only the workspace with this external_id (one or none)")
    .option("--limit <n>", "workspaces on the page shown, 1 to 100 (default 20)")
    .option("--all", "follow every page (same as --page-all)")
    .addHelpText(
      "after",
      `
Prints the first page and says on stderr when there are more; --all follows every page.
--json prints {"ok":true,"data":[…]}, a list even with --external-id.

Examples:
  $ svc workspaces list
  $ svc workspaces list --external-id cus_8f2a61 --field id
  $ svc workspaces list --all --json
  $ svc workspaces list --limit 5 --fields id,name,external_id`,
    )
    .action(
      action<ListOptions>(io, LIST, async (options) =>
        (await import("./list.ts")).listWorkspaces(options, io),
      ),
    );

  group
    .command("create")
    .description("create a workspace: a tenant of the platform")
    .option("--name <name>", "the workspace's name, for people (required)")
    .option("--external-id <id>", "the platform's own id for it (its customer's), unique")
    .option(metadataFlag, metadataHelp, collectPairs)
    .addOption(idempotencyKeyOption())
    .usage("--name <name> [options]")
    .addHelpText(
      "after",
      `
external_id is unique on the server: another workspace with it answers 409
external_id_taken. The request carries an Idempotency-Key (a new one unless given): a lost
answer is asked again without making a second workspace, and the same key given again
answers the workspace it made.

Examples:
  $ svc workspaces create --name "Acme Corp"
  $ svc workspaces create --name "Acme Corp" --external-id cus_8f2a61 \\
      --metadata plan=pro --metadata region=eu --idempotency-key signup-cus_8f2a61
  $ svc workspaces create --name "Acme Corp" --field id
  $ svc workspaces create --name "Acme Corp" --dry-run`,
    )
    .action(
      action<CreateOptions>(io, ONE, async (options) =>
        (await import("./create.ts")).createWorkspace(options, io),
      ),
    );

  group
    .command("get")
    .description("show one workspace")
    .argument("<id>", "the workspace's id (ws_…)")
    .addHelpText(
      "after",
      `
Examples:
  $ svc workspaces get ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc workspaces get ws_0b7c3d5e9f1a2b4c6d8e0f12 --format yaml
  $ svc workspaces get ws_0b7c3d5e9f1a2b4c6d8e0f12 --field external_id`,
    )
    .action(
      action<GlobalOptions>(io, ONE, async (options, [id = ""]) =>
        (await import("./get.ts")).getWorkspace(options, id, io),
      ),
    );

  group
    .command("update")
    .description("rename a workspace or replace its metadata")
    .argument("<id>", "the workspace's id (ws_…)")
    .option("--name <name>", "its new name")
    .option(metadataFlag, `${metadataHelp}; replaces the whole metadata`, collectPairs)
    .option("--clear-metadata", "empty its metadata")
    .addHelpText(
      "after",
      `
--metadata replaces the workspace's whole metadata with the pairs given (as the API's PATCH
does): give every member to keep. external_id never changes.

Examples:
  $ svc workspaces update ws_0b7c3d5e9f1a2b4c6d8e0f12 --name "Acme Inc"
  $ svc workspaces update ws_0b7c3d5e9f1a2b4c6d8e0f12 --metadata plan=enterprise --metadata region=eu
  $ svc workspaces update ws_0b7c3d5e9f1a2b4c6d8e0f12 --clear-metadata --json`,
    )
    .action(
      action<UpdateOptions>(io, ONE, async (options, [id = ""]) =>
        (await import("./update.ts")).updateWorkspace(options, id, io),
      ),
    );

  group
    .command("delete")
    .description("delete a workspace (asks first on a terminal; --yes skips the question)")
    .argument("<id>", "the workspace's id (ws_…)")
    .option(
      "--cascade",
      "delete it with everything in it: destinations, events, deliveries, keys, sessions",
    )
    .addHelpText(
      "after",
      `
A workspace that still has destinations is refused (409 workspace_not_empty) unless
--cascade, which deletes everything in it in one transaction. Its API keys, events and
members go with it either way. On a terminal it asks for confirmation; anything but y or
yes cancels. Without a terminal (a script, CI) it refuses unless --yes is given.

Examples:
  $ svc workspaces delete ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc workspaces delete ws_0b7c3d5e9f1a2b4c6d8e0f12 --cascade --yes --json`,
    )
    .action(
      action<DeleteOptions>(io, DELETE, async (options, [id = ""]) =>
        (await import("./delete.ts")).deleteWorkspace(options, id, io),
      ),
    );
}
