import { Command, Option } from "commander";
import { VERSION } from "../version.ts";
import { registerAdminCommands } from "./admin/admin-commands.ts";
import type { CliIo } from "./io.ts";
import { registerServerCommand } from "./server/server-command.ts";

/** The registry of commands: each group registers itself; nothing else lives here. */
export function buildProgram(io: CliIo): Command {
  const program = new Command("svc")
    .description("Webhook delivery service: run it, and manage webhook destinations")
    .version(VERSION, "-V, --version")
    .option("--json", "print one JSON document: {ok, data} or {ok, error}")
    .addOption(new Option("--format <format>", "output format").choices(["json", "table"]))
    .option("--workspace <workspace-id>", "workspace to act on (env SERVICE_WORKSPACE_ID)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  registerServerCommand(program, io);
  registerAdminCommands(program, io);
  return program;
}
