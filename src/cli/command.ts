import { ACTING_OPTIONS, type ActingOption, type GlobalOptions } from "./global-options.ts";
import type { CliIo } from "./io.ts";
import type { CommandResult } from "./output.ts";

/** What a command does with the global options beyond printing its result. */
export interface CommandSettings {
  /** The acting global options this command honours; it refuses the others. */
  readonly accepts: readonly Exclude<ActingOption, "fields" | "output">[];
  /**
   * The members `--field` and `--fields` may name; without it, the command refuses them. A
   * function when the list comes from the command's response schema: it is imported only when
   * the command runs, so that `--help` never loads the schemas (decision 51).
   */
  readonly fields?: readonly string[] | (() => Promise<readonly string[]>);
  /**
   * What `--output` is: the new file the command writes the secret it issues to ("secret",
   * handled by the command; also `admin backup`'s copy, which holds every secret there is), or the new file its printed result goes to instead of stdout
   * ("result", handled here). Without it, the command refuses `--output`.
   */
  readonly output?: "secret" | "result";
}

/** The settings of each handler `action` made, for the help to show what a command takes. */
const handlerSettings = new WeakMap<object, CommandSettings>();

/** The settings a command's handler was made with; undefined for a group. */
export function settingsOfHandler(handler: object): CommandSettings | undefined {
  return handlerSettings.get(handler);
}

/**
 * The global options a command with these settings takes (their `GlobalOptions` names): how
 * to print, always; the acting ones it honours.
 */
export function globalOptionsTaken(settings: CommandSettings): Set<keyof GlobalOptions> {
  const taken = new Set<keyof GlobalOptions>(["json", "format", "pretty", "pager"]);
  const acting = new Set<ActingOption>(settings.accepts);
  if (settings.fields !== undefined) acting.add("fields");
  if (settings.output !== undefined) acting.add("output");
  for (const name of acting) for (const key of ACTING_OPTIONS[name]) taken.add(key);
  return taken;
}

/**
 * A command is a plain async function of its options (own and global, merged) and its
 * positional arguments. This adapts one to commander: it refuses global options the command
 * does not act on, settles the output mode before the command runs (so a bad combination
 * sends nothing), and prints what the command returns.
 */
// The type parameter is how a command states its options: commander cannot infer them.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function action<Options extends GlobalOptions>(
  io: CliIo,
  settings: CommandSettings,
  run: (options: Options, args: readonly string[]) => Promise<CommandResult>,
): (...commanderArgs: unknown[]) => Promise<void> {
  const handler = async (...commanderArgs: unknown[]): Promise<void> => {
    // Imported when a command runs: declaring commands (for --help) loads none of it.
    const { runAction } = await import("./run-action.ts");
    await runAction(io, settings, run, commanderArgs);
  };
  handlerSettings.set(handler, settings);
  return handler;
}
