import type { Command } from "commander";
import type { CliIo } from "../io.ts";
import { registerCreate } from "./create.ts";
import { registerDelete } from "./delete.ts";
import { registerGet } from "./get.ts";
import { registerList } from "./list.ts";
import { registerUpdate } from "./update.ts";

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
