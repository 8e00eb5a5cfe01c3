import type { Command } from "commander";
import { AppError } from "../errors.ts";
import { ExclusiveFile } from "../lib/exclusive-file.ts";
import { globalOptionsTaken, type CommandSettings } from "./command.ts";
import { ACTING_OPTIONS, FLAG_NAMES, type GlobalOptions } from "./global-options.ts";
import type { CliIo } from "./io.ts";
import { errorCode, intoNewFile } from "./new-file.ts";
import { resolveOutputMode } from "./output-mode.ts";
import { printNotes, printResult, renderResult, type CommandResult } from "./output.ts";
import { plainStyle } from "./render/colour.ts";
import { usageError } from "./usage.ts";

/** `webhooks create`: the command as typed after `svc`. */
function commandName(command: Command): string {
  const names: string[] = [];
  for (let current = command; current.parent !== null; current = current.parent) {
    names.unshift(current.name());
  }
  return names.join(" ");
}

function refuseOptionsNotActedOn(
  options: GlobalOptions,
  settings: CommandSettings,
  name: string,
): void {
  const taken = globalOptionsTaken(settings);
  for (const keys of Object.values(ACTING_OPTIONS)) {
    const given = keys.find((key) => !taken.has(key) && options[key] !== undefined);
    if (given !== undefined) {
      throw usageError(name, `\`svc ${name}\` does not take ${FLAG_NAMES[given]}.`);
    }
  }
}

/**
 * What `action`'s handler does when its command runs (see `action`): apart from command.ts so
 * that declaring the commands, for `--help`, loads none of the output code (decision 51).
 */
// The type parameter is how a command states its options: commander cannot infer them.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
export async function runAction<Options extends GlobalOptions>(
  io: CliIo,
  settings: CommandSettings,
  run: (options: Options, args: readonly string[]) => Promise<CommandResult>,
  commanderArgs: readonly unknown[],
): Promise<void> {
  const command = commanderArgs.at(-1) as Command;
  const options = command.optsWithGlobals<Options>();
  const name = commandName(command);
  refuseOptionsNotActedOn(options, settings, name);
  const fields =
    typeof settings.fields === "function" ? await settings.fields() : (settings.fields ?? []);
  const mode = resolveOutputMode(options, fields, name);
  const print = { mode, pager: options.pager !== false };
  const resultFile = settings.output === "result" ? options.output : undefined;
  if (resultFile === undefined || options.dryRun === true) {
    // A dry run writes nothing anywhere: the preview goes to stdout, the path is only checked.
    if (resultFile !== undefined) await ExclusiveFile.check(resultFile);
    await printResult(io, print, await run(options, command.args));
    return;
  }
  const result = await intoNewFile(
    resultFile,
    () => run(options, command.args),
    (done) => renderResult(mode, done, plainStyle) ?? "",
    (_done, cause) =>
      new AppError(
        "output_not_saved",
        `\`svc ${name}\` succeeded, but its result could not be written to ${resultFile} (${errorCode(cause)}).`,
        { param: "output", cause },
      ),
  );
  printNotes(io, [...(result.notes ?? []), `Wrote the result to ${resultFile}.`]);
}
