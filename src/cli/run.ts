import { CommanderError } from "commander";
import { AppError, ExitStatus } from "../errors.ts";
import type { CliIo } from "./io.ts";
import { jsonRequested } from "./output-mode.ts";
import { buildProgram, type ParseFailure } from "./program.ts";
import { usageError } from "./usage.ts";

/**
 * Runs `svc` with the given arguments and returns its exit status. Expected failures are
 * AppErrors with their catalog exit status; anything else is a bug, reported as one line
 * (SVC_DEBUG=1 adds the stack).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const errorOutput = jsonRequested(argv);
  const failure: ParseFailure = { command: null };
  const program = await buildProgram(io, argv, failure);
  try {
    await program.parseAsync(argv, { from: "user" });
    return ExitStatus.ok;
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return ExitStatus.ok; // --help
    // Imported only to report a failure: `--help` never loads the output code.
    const { printError } = await import("./output.ts");
    if (error instanceof CommanderError) {
      // A group run without a subcommand has shown its help (on stderr); that is all it says,
      // except in JSON, where the envelope is the answer.
      if (error.code === "commander.help") {
        if (errorOutput.json) {
          printError(io, errorOutput, new AppError("usage_error", "A command is missing."));
        }
        return ExitStatus.usage;
      }
      printError(io, errorOutput, commanderUsageError(error, failure.command));
      return ExitStatus.usage;
    }
    if (error instanceof AppError) {
      printError(io, errorOutput, error);
      return error.exit;
    }
    const detail =
      io.env.SVC_DEBUG === "1" && error instanceof Error ? (error.stack ?? "") : String(error);
    printError(
      io,
      errorOutput,
      new AppError("internal_error", `Unexpected failure: ${detail}`, { cause: error }),
    );
    return ExitStatus.failure;
  }
}

/**
 * Commander's refusal as one line with its code, like every other error: `unknown option
 * '--colour'. See `svc webhooks list --help`.` Its suggestion (`(Did you mean list?)`, on a
 * line of its own) joins the sentence.
 */
function commanderUsageError(error: CommanderError, command: string | null): AppError {
  const message = error.message
    .replace(/^error: /, "")
    .replace(/\s*\(Did you mean (.+)\?\)\s*$/s, "; did you mean $1?")
    .replace(/\s*\n\s*/g, " ")
    .trim();
  const sentence = /[.?!]$/.test(message) ? message : `${message}.`;
  return usageError(command ?? "", sentence);
}
