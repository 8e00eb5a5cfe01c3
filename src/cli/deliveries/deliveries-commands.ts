import type { Command } from "commander";
import type { CliIo } from "../io.ts";
import { registerGet } from "./get.ts";
import { registerList } from "./list.ts";
import { registerRecover } from "./recover.ts";
import { registerRetry } from "./retry.ts";

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
