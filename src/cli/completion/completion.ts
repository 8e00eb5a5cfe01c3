import { Argument, type Command, type Option } from "commander";
import { action } from "../command.ts";
import type { GlobalOptions } from "../global-options.ts";
import type { CliIo } from "../io.ts";

/**
 * `svc completion bash|zsh|fish`: a completion script made from the program itself, so that it
 * offers exactly the commands and options this `svc` has. Each command offers its subcommands,
 * its own options and the global options it takes (as its help lists them).
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  /** The command as typed after `svc`: `webhooks list`; "" for svc itself. */
  readonly path: string;
  readonly subcommands: readonly { name: string; description: string }[];
  readonly options: readonly { flags: string[]; description: string }[];
}

/** The flags an option is typed as: `-y` and `--yes`. */
function flagsOf(option: Option): string[] {
  return [option.short, option.long].filter((flag): flag is string => flag !== undefined);
}

/** Every command of the program, with what may follow it. */
function nodesOf(program: Command): Node[] {
  const nodes: Node[] = [];
  const visit = (command: Command, path: readonly string[]) => {
    const help = command.createHelp();
    const options = [...help.visibleOptions(command), ...help.visibleGlobalOptions(command)];
    nodes.push({
      path: path.join(" "),
      subcommands: command.commands.map((sub) => ({
        name: sub.name(),
        description: sub.description(),
      })),
      options: options.map((option) => ({
        flags: flagsOf(option),
        description: option.description,
      })),
    });
    for (const sub of command.commands) visit(sub, [...path, sub.name()]);
  };
  visit(program, []);
  return nodes;
}

/** Single-quoted for a POSIX shell. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function words(node: Node): string {
  return [...node.subcommands.map((sub) => sub.name), ...node.options.flatMap((o) => o.flags)].join(
    " ",
  );
}

/**
 * Bash (and zsh, through its bashcompinit): the words after `svc` that name commands lead
 * down the tree; anything else (an option, an id) is passed over; the current word is
 * completed from what the command reached offers.
 */
function bashScript(nodes: readonly Node[]): string {
  const cases = nodes
    .map((node) => `    ${quoted(node.path)}) echo ${quoted(words(node))} ;;`)
    .join("\n");
  return `# svc completion for bash: source it, or save it as
# ~/.local/share/bash-completion/completions/svc
_svc_words() {
  case "$1" in
${cases}
    *) return 1 ;;
  esac
}

_svc_complete() {
  # $2 is the word being completed (bash passes it; zsh's bashcompinit too). Words are
  # counted, not indexed, so that zsh's arrays (from 1) read the same as bash's (from 0).
  local cur="$2" node="" word next i=0
  for word in "\${COMP_WORDS[@]}"; do
    if [ "$i" -ge 1 ] && [ "$i" -lt "$COMP_CWORD" ]; then
      case "$word" in
        -*) ;;
        *)
          next="\${node:+$node }$word"
          if _svc_words "$next" >/dev/null; then node="$next"; fi
          ;;
      esac
    fi
    i=$((i + 1))
  done
  local IFS=$' \\t\\n'
  COMPREPLY=($(compgen -W "$(_svc_words "$node")" -- "$cur"))
}

complete -o default -F _svc_complete svc
`;
}

function zshScript(nodes: readonly Node[]): string {
  return `# svc completion for zsh: source it from ~/.zshrc (after compinit)
autoload -U +X bashcompinit && bashcompinit
${bashScript(nodes).replace(/^# svc completion for bash.*\n# .*\n/, "")}`;
}

/** Fish: each command's words offered once the words that lead to it are seen, and no more. */
function fishScript(nodes: readonly Node[]): string {
  const lines = ["# svc completion for fish: save it as ~/.config/fish/completions/svc.fish"];
  lines.push(
    "function __svc_at",
    "    # true when the command words typed so far are exactly $argv",
    "    set -l node",
    "    for word in (commandline -opc)[2..-1]",
    "        string match -q -- '-*' $word; and continue",
    "        set -l next $node $word",
    '        if contains -- "$next" $__svc_paths',
    "            set node $next",
    "        end",
    "    end",
    '    test "$node" = "$argv"',
    "end",
    `set -g __svc_paths ${nodes
      .filter((node) => node.path !== "")
      .map((node) => quoted(node.path))
      .join(" ")}`,
  );
  for (const node of nodes) {
    const condition = quoted(`__svc_at ${node.path}`.trim());
    for (const sub of node.subcommands) {
      lines.push(
        `complete -c svc -f -n ${condition} -a ${quoted(sub.name)} -d ${quoted(sub.description)}`,
      );
    }
    for (const option of node.options) {
      const flags = option.flags
        .map((flag) => (flag.startsWith("--") ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`))
        .join(" ");
      lines.push(`complete -c svc -n ${condition} ${flags} -d ${quoted(option.description)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const nodes = nodesOf(program);
  switch (shell) {
    case "bash":
      return bashScript(nodes);
    case "zsh":
      return zshScript(nodes);
    case "fish":
      return fishScript(nodes);
  }
}

export function registerCompletionCommand(program: Command, io: CliIo): void {
  program
    .command("completion")
    .description("print a shell completion script: bash, zsh or fish")
    .addArgument(new Argument("<shell>", "the shell").choices(SHELLS))
    .addHelpText(
      "after",
      `
The script completes svc's commands and each command's options, as this svc has them.

Examples:
  $ svc completion bash > ~/.local/share/bash-completion/completions/svc
  $ echo 'source <(svc completion zsh)' >> ~/.zshrc
  $ svc completion fish > ~/.config/fish/completions/svc.fish`,
    )
    .action(
      action<GlobalOptions>(io, { accepts: [] }, (_options, [shell = "bash"]) => {
        const script = completionScript(program, shell as Shell);
        return Promise.resolve({ data: script, human: script });
      }),
    );
}
