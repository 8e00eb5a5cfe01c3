import { errorCatalog, type AppError } from "../errors.ts";
import type { CliIo } from "./io.ts";

/** What a command produced: the data of the JSON envelope and its human rendering. */
export interface CommandResult {
  readonly data: unknown;
  /** For stdout on a terminal; null prints nothing. */
  readonly human: string | null;
  /** Remarks for a person (stderr), never part of the data. */
  readonly notes?: readonly string[];
}

export interface OutputOptions {
  readonly json: boolean;
}

function writeLine(stream: CliIo["stdout"], text: string): void {
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printResult(io: CliIo, options: OutputOptions, result: CommandResult): void {
  if (options.json) {
    writeLine(io.stdout, JSON.stringify({ ok: true, data: result.data }));
  } else if (result.human !== null) {
    writeLine(io.stdout, result.human);
  }
  for (const note of result.notes ?? []) writeLine(io.stderr, note);
}

/** One line on stderr for a person; the envelope on stdout for a program. */
export function printError(io: CliIo, options: OutputOptions, error: AppError): void {
  if (options.json) {
    const envelope = {
      ok: false,
      error: { code: error.code, message: error.message, status: errorCatalog[error.code].status },
    };
    writeLine(io.stdout, JSON.stringify(envelope));
  } else {
    writeLine(io.stderr, `error: ${error.message} (${error.code})`);
  }
}
