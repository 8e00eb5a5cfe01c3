import { Option, type Command } from "commander";
import { action, type CommandSettings } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";
import { OPERATOR_KEY_HELP } from "../workspaces/workspaces-commands.ts";
import type { LinkOptions } from "./link-create.ts";
import { PORTAL_ROLES } from "../../interfaces.ts";

/**
 * `svc portal-link create` and `svc portal-sessions end`: a workspace's customer portal over
 * the platform API, for an operator key with portal:write. Two groups, named after the two
 * resources of the routes (`…/portal-links`, `…/portal-sessions`), each with its one verb, as
 * `gh` and `stripe` name a resource then what is done to it. Bodies are imported when run.
 */

const LINK: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => {
    const { membersOf } = await import("../../contract/common.ts");
    return membersOf((await import("./portal-api.ts")).portalLinkSchema);
  },
};
const END: CommandSettings = {
  accepts: ["workspace", "raw", "dryRun", "timing"],
  fields: async () => {
    const { membersOf } = await import("../../contract/common.ts");
    return membersOf((await import("./portal-api.ts")).portalSessionsEndedSchema);
  },
  output: "result",
};

export function registerPortalCommands(program: Command, io: CliIo): void {
  const link = program
    .command("portal-link")
    .description("make a one-time link to a workspace's customer portal (operator key)")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
${OPERATOR_KEY_HELP}

Examples:
  $ svc portal-link create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role member
  $ svc portal-sessions end --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12`,
    );
  link
    .command("create")
    .description("print a one-time URL that opens the workspace's portal (a bearer credential)")
    .addOption(
      new Option(
        "--role <role>",
        "what the customer may do: viewer reads, member also changes",
      ).choices(PORTAL_ROLES),
    )
    .option(
      "--expires-in <duration>",
      "how long it stays valid unopened: 90s, 10m, 1h (at most 1h; default the server's, 5m)",
    )
    .usage("--workspace <id> --role viewer|member [options]")
    .addHelpText(
      "after",
      `
The URL is printed on stdout alone: it is a bearer credential until it is opened or expires
(whoever opens it first gets into the workspace's portal), so hand it straight to the
customer's browser (a redirect, an iframe's src) and nowhere else: not a log, a ticket or a
chat. It works once; the session it opens reaches this workspace alone, with the role's
scopes: viewer reads destinations and deliveries, member also changes them and retries.

Examples:
  $ svc portal-link create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role viewer
  $ svc portal-link create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role member --expires-in 10m
  $ svc portal-link create --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --role member --json`,
    )
    .action(
      action<LinkOptions>(io, LINK, async (options) =>
        (await import("./link-create.ts")).createPortalLink(options, io),
      ),
    );

  const sessions = program
    .command("portal-sessions")
    .description("end a workspace's customer portal sessions (operator key)")
    .helpCommand(false)
    .addHelpText(
      "after",
      `
${OPERATOR_KEY_HELP}

Examples:
  $ svc portal-sessions end --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12`,
    );
  sessions
    .command("end")
    .description("end every portal session of a workspace, and its links not yet opened")
    .usage("--workspace <id> [options]")
    .addHelpText(
      "after",
      `
Every portal session of the workspace ends at once (its next request is refused), and its
links not yet opened die. "ended" counts both. Nothing else of the workspace changes; a new
link opens the portal again.

Examples:
  $ svc portal-sessions end --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12
  $ svc portal-sessions end --workspace ws_0b7c3d5e9f1a2b4c6d8e0f12 --field ended`,
    )
    .action(
      action<GlobalOptions>(io, END, async (options) =>
        (await import("./sessions-end.ts")).endPortalSessions(options, io),
      ),
    );
}
