import { Command, Help, type Option } from "commander";
import { globalOptionsTaken, settingsOfHandler, type CommandSettings } from "./command.ts";
import { VERSION } from "../version.ts";
import { registerAdminCommands } from "./admin/admin-commands.ts";
import { registerAuthCommands } from "./auth/auth-commands.ts";
import { registerCompletionCommand } from "./completion/completion.ts";
import { registerDeliveryCommands } from "./deliveries/deliveries-commands.ts";
import { registerEventCommands } from "./events/events-commands.ts";
import { registerKeyCommands } from "./keys/keys-commands.ts";
import { registerPortalCommands } from "./portal/portal-commands.ts";
import { addGlobalOptions, type GlobalOptions } from "./global-options.ts";
import type { CliIo } from "./io.ts";
import { registerListenCommand } from "./listen/listen.ts";
import { registerServerCommand } from "./server/server-command.ts";
import { registerWebhookCommands } from "./webhooks/webhooks-commands.ts";
import { registerWorkspaceCommands } from "./workspaces/workspaces-commands.ts";

/**
 * A command that knows what its handler takes (`action`'s settings), so that its help shows
 * the global options that apply to it, once, and no others. Commander makes subcommands with
 * `createCommand`, so every command of the program is one.
 */
class SvcCommand extends Command {
  settings: CommandSettings | undefined;

  override createCommand(name?: string): SvcCommand {
    return new SvcCommand(name);
  }

  override action(handler: Parameters<Command["action"]>[0]): this {
    this.settings = settingsOfHandler(handler);
    return super.action(handler);
  }
}

/** The program's global options a command's help lists: those it takes; none for a group. */
function globalOptionsFor(command: Command, options: readonly Option[]): Option[] {
  const settings = command instanceof SvcCommand ? command.settings : undefined;
  if (settings === undefined) return []; // a group: its commands take them
  const taken = globalOptionsTaken(settings);
  return options.filter((option) => taken.has(option.attributeName() as keyof GlobalOptions));
}

/** Where commander's parse failed: the command as typed after `svc`, for the help to point at. */
export interface ParseFailure {
  command: string | null;
}

/**
 * The registry of commands: each group registers itself; nothing else lives here.
 * Commander's own errors (an unknown option or command, a missing argument) are not written
 * by commander: `runCli` reports them as one line with their code, like every other error,
 * pointing at the help of the command that failed (`failure` says which).
 */
export function buildProgram(io: CliIo, failure: ParseFailure = { command: null }): Command {
  const program = addGlobalOptions(
    new SvcCommand("svc")
      .description(
        "Webhook delivery service: run it, manage webhook destinations, publish events and follow their deliveries",
      )
      .version(VERSION, "-V, --version"),
  )
    // Set before the commands are added: they copy these settings.
    .configureHelp({
      showGlobalOptions: true,
      visibleGlobalOptions(command) {
        return globalOptionsFor(command, Help.prototype.visibleGlobalOptions.call(this, command));
      },
    })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => undefined,
    });
  program.addHelpText(
    "after",
    `
Run "svc <command> --help" for a command's options and examples; "svc completion --help" to
complete commands and options in your shell.

Examples:
  $ svc admin init --output owner.key          # a first workspace and an owner API key
  $ svc server                                 # the API and the delivery worker
  $ svc webhooks create --url https://example.com/hooks --output whsec.txt
  $ svc events send --type job.completed --data '{"id":"job_42"}'
  $ svc deliveries list --status failed --since 1d
  $ svc listen --forward-to http://localhost:3000/hooks   # to a server on your machine
  $ svc workspaces create --name Acme --external-id cus_8f2a61   # with an operator key`,
  );
  registerServerCommand(program, io);
  registerAdminCommands(program, io);
  registerAuthCommands(program, io);
  registerWebhookCommands(program, io);
  registerEventCommands(program, io);
  registerDeliveryCommands(program, io);
  registerListenCommand(program, io);
  registerWorkspaceCommands(program, io);
  registerKeyCommands(program, io);
  registerPortalCommands(program, io);
  registerCompletionCommand(program, io);
  recordFailures(program, [], failure);
  return program;
}

/** Each command notes itself as the one that failed when commander refuses its arguments. */
function recordFailures(command: Command, path: readonly string[], failure: ParseFailure): void {
  command.configureOutput({
    outputError: () => {
      failure.command = path.join(" ");
    },
  });
  for (const subcommand of command.commands) {
    recordFailures(subcommand, [...path, subcommand.name()], failure);
  }
}
