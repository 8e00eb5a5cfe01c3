import type { Command } from "commander";
import type { CliIo } from "./io.ts";
import { printResult, type CommandResult } from "./output.ts";

/** Options every command sees (program-level). */
export interface GlobalOptions {
  readonly json?: boolean;
  readonly format?: string;
  readonly workspace?: string;
}

export function wantsJson(options: GlobalOptions): boolean {
  return options.json === true || options.format === "json";
}

/**
 * A command is a plain async function of its options (own and global, merged) and its
 * positional arguments. This adapts one to commander and prints what it returns.
 */
// The type parameter is how a command states its options: commander cannot infer them.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export function action<Options extends GlobalOptions>(
  io: CliIo,
  run: (options: Options, args: readonly string[]) => Promise<CommandResult>,
): (...commanderArgs: unknown[]) => Promise<void> {
  return async (...commanderArgs) => {
    const command = commanderArgs.at(-1) as Command;
    const options = command.optsWithGlobals<Options>();
    const result = await run(options, command.args);
    printResult(io, { json: wantsJson(options) }, result);
  };
}
