import type { AppError } from "../errors.ts";
import { ApiError } from "./client/api-error.ts";
import type { CliIo } from "./io.ts";
import type { OutputMode } from "./output-mode.ts";
import { styleFor, type Style } from "./render/colour.ts";
import { renderKeyValue } from "./render/key-value.ts";
import { printable } from "./render/printable.ts";
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
  /**
   * The data as a table or `key: value` lines show it, when that differs from `data`: a
   * notification's `created`, Unix seconds in JSON as on the wire, is an ISO 8601 time there,
   * as every other time a person reads.
   */
  readonly displayed?: unknown;
  /** The columns of a list's table, in order (default: the members of its first item). */
  readonly columns?: readonly string[];
  /** The API's response body (one per line for several pages), for `--raw`. */
  readonly raw?: string;
  /** Remarks for a person (stderr), never part of the data. */
  readonly notes?: readonly string[];
  /** The command printed its output as it went (`svc listen`): only the notes remain. */
  readonly streamed?: boolean;
}

/**
 * JSON text whose strings escape, beside what JSON escapes, every character `printable` does
 * (C1 and bidirectional controls…): the same value to any parser, and harmless on a terminal.
 */
export function jsonText(value: unknown, pretty = false): string {
  return printable(JSON.stringify(value, null, pretty ? 2 : undefined), { lineBreaks: true });
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
  if (fields === null && result.human !== undefined) {
    return result.human === null ? null : printable(result.human, { lineBreaks: true });
  }
  const shown = result.displayed ?? result.data;
  const data = fields === null ? shown : selectMembers(shown, fields);
  if (Array.isArray(data)) {
    const records = data.filter(isRecord);
    if (records.length === 0) return null;
    const columns = fields ?? result.columns ?? Object.keys(records[0] ?? {});
    return renderTable(records, columns, style);
  }
  return isRecord(data) ? renderKeyValue(data) : displayValue(data);
}

/**
 * The text a result prints on stdout in this mode; null when it prints nothing. `terminal`:
 * stdout is a terminal, where even `--field` and `--raw` print printable.
 */
export function renderResult(
  mode: OutputMode,
  result: CommandResult,
  style: Style,
  terminal = false,
): string | null {
  switch (mode.kind) {
    case "raw":
      if (result.raw === undefined)
        throw new Error("--raw was accepted by a command without a body");
      // The body byte for byte to a pipe or a file; a terminal would act on a C1 control or a
      // bidirectional override inside a JSON string, which JSON does not escape.
      return withNewline(terminal ? printable(result.raw, { lineBreaks: true }) : result.raw);
    case "field": {
      const bare = (record: unknown): string =>
        bareValue(isRecord(record) ? (record[mode.name] ?? null) : null);
      const value = terminal ? (record: unknown) => printable(bare(record)) : bare;
      if (!Array.isArray(result.data)) return withNewline(value(result.data));
      // One line per item: an empty list prints nothing, not an empty line.
      return result.data.length === 0 ? null : withNewline(result.data.map(value).join("\n"));
    }
    case "json": {
      const data = mode.fields === null ? result.data : selectMembers(result.data, mode.fields);
      return withNewline(jsonText({ ok: true, data }, mode.pretty));
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
  if (result.streamed === true) {
    printNotes(io, result.notes ?? []);
    return;
  }
  const text = renderResult(
    settings.mode,
    result,
    styleFor(io.stdout, io.env),
    io.stdout.isTTY === true,
  );
  if (text !== null) {
    const forPeople = settings.mode.kind === "table" || settings.mode.kind === "yaml";
    await writePaged(io, text, forPeople && settings.pager);
  }
  printNotes(io, result.notes ?? []);
}

export function printNotes(io: CliIo, notes: readonly string[]): void {
  for (const note of notes) writeLine(io.stderr, printable(note, { lineBreaks: true }));
}

export interface ErrorOutput {
  readonly json: boolean;
  readonly pretty?: boolean;
}

/**
 * One line on stderr for a person, printable: a message of the API's own is kept to its line,
 * one of `svc`'s own may have several (a configuration's problems). The envelope on stdout
 * for a program.
 */
export function printError(io: CliIo, options: ErrorOutput, error: AppError): void {
  if (options.json) {
    const envelope = {
      ok: false,
      error: { code: error.code, message: error.message, status: error.status },
    };
    writeLine(io.stdout, jsonText(envelope, options.pretty === true));
  } else {
    writeLine(
      io.stderr,
      `${styleFor(io.stderr, io.env).red("error:")} ${printable(error.message, { lineBreaks: !(error instanceof ApiError) })} (${error.code})`,
    );
  }
}
