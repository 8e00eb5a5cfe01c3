import { CommanderError } from "commander";
import { AppError, ExitStatus } from "../errors.ts";
import type { CliIo } from "./io.ts";
import { jsonRequested } from "./output-mode.ts";
import { printError } from "./output.ts";
import { buildProgram } from "./program.ts";

/**
 * Runs `svc` with the given arguments and returns its exit status. Expected failures are
 * AppErrors with their catalog exit status; anything else is a bug, reported as one line
 * (SVC_DEBUG=1 adds the stack).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const errorOutput = jsonRequested(argv);
  const json = errorOutput.json;
  // In JSON mode a usage error is reported in the envelope, not as commander's text.
  const program = buildProgram(io, { json });
  try {
    await program.parseAsync(argv, { from: "user" });
    return ExitStatus.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return ExitStatus.ok; // --help, --version
      if (json) {
        // A group run without a subcommand shows its help; commander's message is a placeholder.
        const message =
          error.code === "commander.help"
            ? "A command is missing."
            : error.message.replace(/^error: /, "");
        printError(
          io,
          errorOutput,
          new AppError("usage_error", `${message} (run with --help for usage)`),
        );
      }
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
