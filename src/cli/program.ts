import { Command } from "commander";
import { VERSION } from "../version.ts";
import { registerAdminCommands } from "./admin/admin-commands.ts";
import { registerAuthCommands } from "./auth/auth-commands.ts";
import { registerDeliveryCommands } from "./deliveries/deliveries-commands.ts";
import { registerEventCommands } from "./events/events-commands.ts";
import { addGlobalOptions } from "./global-options.ts";
import type { CliIo } from "./io.ts";
import { registerServerCommand } from "./server/server-command.ts";
import { registerWebhookCommands } from "./webhooks/webhooks-commands.ts";

/**
 * The registry of commands: each group registers itself; nothing else lives here.
 * `json`: failures are reported as the JSON envelope, so commander's own error text is not
 * written (subcommands copy this setting when they are added, hence it is given here).
 */
export function buildProgram(io: CliIo, options: { json: boolean }): Command {
  const program = addGlobalOptions(
    new Command("svc")
      .description(
        "Webhook delivery service: run it, manage webhook destinations, publish events and follow their deliveries",
      )
      .version(VERSION, "-V, --version"),
  )
    // Set before the commands are added: they copy these settings.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => (options.json ? undefined : io.stderr.write(text)),
    });
  registerServerCommand(program, io);
  registerAdminCommands(program, io);
  registerAuthCommands(program, io);
  registerWebhookCommands(program, io);
  registerEventCommands(program, io);
  registerDeliveryCommands(program, io);
  pointUsageErrorsAtHelp(program, []);
  return program;
}

/** A usage error names the help to read: `(run "svc webhooks create --help" for usage)`. */
function pointUsageErrorsAtHelp(command: Command, path: readonly string[]): void {
  for (const subcommand of command.commands) {
    const names = [...path, subcommand.name()];
    subcommand.showHelpAfterError(`(run "svc ${names.join(" ")} --help" for usage)`);
    pointUsageErrorsAtHelp(subcommand, names);
  }
}
