import type { Command } from "commander";
import type { CliIo } from "../io.ts";
import { registerGet } from "./get.ts";
import { registerList } from "./list.ts";
import { registerSend } from "./send.ts";

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
