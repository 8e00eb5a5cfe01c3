import { CommanderError } from "commander";
import { AppError, ExitStatus } from "../errors.ts";
import type { CliIo } from "./io.ts";
import { printError } from "./output.ts";
import { buildProgram } from "./program.ts";

/** Whether the command line asks for JSON output, read before (or without) a full parse. */
function jsonRequested(argv: readonly string[]): boolean {
  return argv.some(
    (arg, index) =>
      arg === "--json" ||
      arg === "--format=json" ||
      (arg === "--format" && argv[index + 1] === "json"),
  );
}

/**
 * Runs `svc` with the given arguments and returns its exit status. Expected failures are
 * AppErrors with their catalog exit status; anything else is a bug, reported as one line
 * (SVC_DEBUG=1 adds the stack).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const json = jsonRequested(argv);
  const program = buildProgram(io);
  if (json) {
    // In JSON mode a usage error is reported in the envelope, not as commander's text.
    program.configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: () => undefined,
    });
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return ExitStatus.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return ExitStatus.ok; // --help, --version
      if (json) {
        const message = error.message.replace(/^error: /, "");
        printError(
          io,
          { json },
          new AppError("usage_error", `${message} (run with --help for usage)`),
        );
      }
      return ExitStatus.usage;
    }
    if (error instanceof AppError) {
      printError(io, { json }, error);
      return error.exit;
    }
    const detail =
      io.env.SVC_DEBUG === "1" && error instanceof Error ? (error.stack ?? "") : String(error);
    printError(
      io,
      { json },
      new AppError("internal_error", `Unexpected failure: ${detail}`, { cause: error }),
    );
    return ExitStatus.failure;
  }
}
