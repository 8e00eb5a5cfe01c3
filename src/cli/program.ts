import { Command, Help, type Option } from "commander";
import { globalOptionsTaken, settingsOfHandler, type CommandSettings } from "./command.ts";
import { VERSION } from "../version.ts";
import { addGlobalOptions, type GlobalOptions } from "./global-options.ts";
import type { CliIo } from "./io.ts";
import { PRERENDERED_HELP_WIDTH } from "./prerendered-help.ts";

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
function globalOptionsFor(command: Command): Option[] {
  const settings = command instanceof SvcCommand ? command.settings : undefined;
  if (settings === undefined || command.parent === null) return []; // a group, or svc itself
  let root = command.parent;
  while (root.parent !== null) root = root.parent;
  const taken = globalOptionsTaken(settings);
  return root.options.filter(
    (option) => !option.hidden && taken.has(option.attributeName() as keyof GlobalOptions),
  );
}

/**
 * A command's help as `gh` shows it: its own options first, then the global options it takes,
 * once and briefly: their flags on a few lines, not a description each (they are described
 * once, in `svc --help`). Before, each command's help repeated about 25 lines of them.
 */
function formatHelp(this: Help, command: Command, helper: Help): string {
  const own = Help.prototype.formatHelp.call(this, command, helper);
  const globals = helper.visibleGlobalOptions(command).map((option) => helper.optionTerm(option));
  if (globals.length === 0) return own;
  const width = (helper.helpWidth ?? 80) - 2;
  const lines: string[] = [];
  for (const term of globals) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 2 + term.length <= width) {
      lines[lines.length - 1] = `${last}  ${term}`;
    } else lines.push(term);
  }
  const heading = helper.styleTitle('Global Options (described in "svc --help"):');
  return `${own}\n${heading}\n${lines.map((line) => `  ${line}`).join("\n")}\n`;
}

type Register = (program: Command, io: CliIo) => void;

/**
 * The top-level commands, in the order the help lists them, each imported only when the
 * command line needs it: `svc webhooks list` imports the declarations of `webhooks` alone, and
 * those import no command's body (each command imports its own when it runs). `admin`'s
 * declarations still import their bodies: only `svc admin …` and the whole tree load them
 * (decision 51).
 */
const COMMANDS: readonly {
  readonly names: readonly string[];
  readonly load: () => Promise<Register>;
  /** It declares nothing itself until every other command is declared. */
  readonly needsAll?: boolean;
}[] = [
  {
    names: ["server"],
    load: async () => (await import("./server/server-command.ts")).registerServerCommand,
  },
  {
    names: ["admin"],
    load: async () => (await import("./admin/admin-commands.ts")).registerAdminCommands,
  },
  {
    names: ["auth"],
    load: async () => (await import("./auth/auth-commands.ts")).registerAuthCommands,
  },
  {
    names: ["webhooks"],
    load: async () => (await import("./webhooks/webhooks-commands.ts")).registerWebhookCommands,
  },
  {
    names: ["events"],
    load: async () => (await import("./events/events-commands.ts")).registerEventCommands,
  },
  {
    names: ["deliveries"],
    load: async () =>
      (await import("./deliveries/deliveries-commands.ts")).registerDeliveryCommands,
  },
  {
    names: ["listen"],
    load: async () => (await import("./listen/listen-command.ts")).registerListenCommand,
  },
  {
    names: ["workspaces"],
    load: async () =>
      (await import("./workspaces/workspaces-commands.ts")).registerWorkspaceCommands,
  },
  {
    names: ["keys"],
    load: async () => (await import("./keys/keys-commands.ts")).registerKeyCommands,
  },
  {
    names: ["portal-link", "portal-sessions"],
    load: async () => (await import("./portal/portal-commands.ts")).registerPortalCommands,
  },
  {
    names: ["completion"],
    load: async () => (await import("./completion/completion.ts")).registerCompletionCommand,
    // It prints a script for every command there is.
    needsAll: true,
  },
];

/**
 * The command the arguments name (`webhooks` in `svc --json webhooks list`): the first word that
 * is neither an option nor the value of a global option that takes one. When it names a
 * top-level command, only that one is declared: `svc webhooks list` declares no other group.
 */
function commandWord(argv: readonly string[], program: Command): string | undefined {
  const takesValue = new Set(
    program.options.filter((option) => option.required || option.optional).map((o) => o.long),
  );
  for (let index = 0; index < argv.length; index += 1) {
    const word = argv[index] ?? "";
    if (word === "--") return argv[index + 1];
    if (!word.startsWith("-")) return word;
    if (takesValue.has(word)) index += 1;
  }
  return undefined;
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
export async function buildProgram(
  io: CliIo,
  argv: readonly string[],
  failure: ParseFailure = { command: null },
): Promise<Command> {
  const program = addGlobalOptions(
    new SvcCommand("svc")
      .description(
        "Webhook delivery service: run it, manage webhook destinations, publish events and follow their deliveries",
      )
      .version(VERSION, "-V, --version"),
  )
    // Set before the commands are added: they copy these settings.
    // Commander shows no global options itself (showGlobalOptions stays false): formatHelp
    // lists those visibleGlobalOptions gives, which `svc completion` offers too.
    .configureHelp({ formatHelp, visibleGlobalOptions: globalOptionsFor })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => undefined,
      // Help is wrapped to the width of the streams svc writes to, not to the process's own
      // (commander's default): a run in process with its own streams renders what a run of
      // the binary with the same streams would, which is how the build renders the texts
      // `prerenderedHelp` prints.
      getOutHelpWidth: () => terminalWidth(io.stdout),
      getErrHelpWidth: () => terminalWidth(io.stderr),
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
  const word = commandWord(argv, program) ?? "";
  const named = COMMANDS.find((command) => command.names.includes(word));
  for (const command of COMMANDS) {
    if (named === undefined || named.needsAll === true || command === named) {
      const register = await command.load();
      register(program, io);
    }
  }
  recordFailures(program, [], failure);
  return program;
}

/** A terminal's width; 80 (commander's own default) for a pipe or a file. */
function terminalWidth(stream: CliIo["stdout"]): number {
  const columns = stream.isTTY === true ? (stream as { columns?: number }).columns : undefined;
  return columns ?? PRERENDERED_HELP_WIDTH;
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
