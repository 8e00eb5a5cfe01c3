import type { AppError } from "../errors.ts";
import type { CliIo } from "./io.ts";
import type { OutputMode } from "./output-mode.ts";
import { styleFor, type Style } from "./render/colour.ts";
import { renderKeyValue } from "./render/key-value.ts";
import { writePaged } from "./render/pager.ts";
import { renderTable } from "./render/table.ts";
import { bareValue, displayValue, isRecord } from "./render/values.ts";
import { toYaml } from "./render/yaml.ts";

/** What a command produced: the data of the JSON envelope and how a person reads it. */
export interface CommandResult {
  readonly data: unknown;
  /**
   * For stdout in table format; null prints nothing. When absent, the data is rendered: a
   * list as a table, one resource as `key: value` lines.
   */
  readonly human?: string | null;
  /** The columns of a list's table, in order (default: the members of its first item). */
  readonly columns?: readonly string[];
  /** The API's response body (one per line for several pages), for `--raw`. */
  readonly raw?: string;
  /** Remarks for a person (stderr), never part of the data. */
  readonly notes?: readonly string[];
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

function writeLine(stream: CliIo["stdout"], text: string): void {
  stream.write(withNewline(text));
}

function selectMembers(value: unknown, fields: readonly string[]): unknown {
  const pick = (record: unknown): unknown =>
    isRecord(record)
      ? Object.fromEntries(fields.map((name) => [name, record[name] ?? null]))
      : record;
  return Array.isArray(value) ? value.map(pick) : pick(value);
}

function renderHuman(result: CommandResult, fields: readonly string[] | null, style: Style) {
  if (fields === null && result.human !== undefined) return result.human;
  const data = fields === null ? result.data : selectMembers(result.data, fields);
  if (Array.isArray(data)) {
    const records = data.filter(isRecord);
    if (records.length === 0) return null;
    const columns = fields ?? result.columns ?? Object.keys(records[0] ?? {});
    return renderTable(records, columns, style);
  }
  return isRecord(data) ? renderKeyValue(data) : displayValue(data);
}

/** The text a result prints on stdout in this mode; null when it prints nothing. */
export function renderResult(mode: OutputMode, result: CommandResult, style: Style): string | null {
  switch (mode.kind) {
    case "raw":
      if (result.raw === undefined)
        throw new Error("--raw was accepted by a command without a body");
      return withNewline(result.raw);
    case "field": {
      const value = (record: unknown): string =>
        bareValue(isRecord(record) ? (record[mode.name] ?? null) : null);
      if (!Array.isArray(result.data)) return withNewline(value(result.data));
      // One line per item: an empty list prints nothing, not an empty line.
      return result.data.length === 0 ? null : withNewline(result.data.map(value).join("\n"));
    }
    case "json": {
      const data = mode.fields === null ? result.data : selectMembers(result.data, mode.fields);
      return withNewline(JSON.stringify({ ok: true, data }, null, mode.pretty ? 2 : undefined));
    }
    case "yaml":
      return withNewline(
        toYaml(mode.fields === null ? result.data : selectMembers(result.data, mode.fields)),
      );
    case "table": {
      const text = renderHuman(result, mode.fields, style);
      return text === null ? null : withNewline(text);
    }
  }
}

export interface PrintSettings {
  readonly mode: OutputMode;
  /** False with --no-pager. */
  readonly pager: boolean;
}

/** Prints a result on stdout (human formats through the pager on a terminal), then its notes. */
export async function printResult(
  io: CliIo,
  settings: PrintSettings,
  result: CommandResult,
): Promise<void> {
  const text = renderResult(settings.mode, result, styleFor(io.stdout, io.env));
  if (text !== null) {
    const forPeople = settings.mode.kind === "table" || settings.mode.kind === "yaml";
    await writePaged(io, text, forPeople && settings.pager);
  }
  printNotes(io, result.notes ?? []);
}

export function printNotes(io: CliIo, notes: readonly string[]): void {
  for (const note of notes) writeLine(io.stderr, note);
}

export interface ErrorOutput {
  readonly json: boolean;
  readonly pretty?: boolean;
}

/** One line on stderr for a person; the envelope on stdout for a program. */
export function printError(io: CliIo, options: ErrorOutput, error: AppError): void {
  if (options.json) {
    const envelope = {
      ok: false,
      error: { code: error.code, message: error.message, status: error.status },
    };
    writeLine(io.stdout, JSON.stringify(envelope, null, options.pretty === true ? 2 : undefined));
  } else {
    writeLine(
      io.stderr,
      `${styleFor(io.stderr, io.env).red("error:")} ${error.message} (${error.code})`,
    );
  }
}
