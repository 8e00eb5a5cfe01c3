import { FLAG_NAMES, type GlobalOptions, type OutputFormat } from "./global-options.ts";
import { splitList } from "../lib/split-list.ts";
import { usageError } from "./usage.ts";

/** How a result is printed, decided once from the global options. */
export type OutputMode =
  | { readonly kind: "table" | "yaml"; readonly fields: readonly string[] | null }
  | { readonly kind: "json"; readonly fields: readonly string[] | null; readonly pretty: boolean }
  | { readonly kind: "field"; readonly name: string }
  | { readonly kind: "raw" };

/**
 * Reads the output options and refuses combinations that cannot both be honoured, rather than
 * let one silently win: `--raw` prints bytes as received, so nothing may reshape them;
 * `--field` prints a bare value, so no format applies; `--dry-run` prints a request, so there
 * is no response to select from. `--json` is `--format json`, and `--pretty` implies it.
 * `allowedFields`: the members `--field` and `--fields` may name.
 */
export function resolveOutputMode(
  options: GlobalOptions,
  allowedFields: readonly string[],
  command: string,
): OutputMode {
  const conflict = (first: keyof GlobalOptions, second: keyof GlobalOptions, why: string) =>
    usageError(
      command,
      `${FLAG_NAMES[first]} cannot be combined with ${FLAG_NAMES[second]}: ${why}.`,
    );
  const format = chosenFormat(options, command);
  if (options.raw === true) {
    for (const other of ["json", "format", "pretty", "field", "fields"] as const) {
      if (options[other] !== undefined) {
        throw conflict("raw", other, "--raw prints the response body exactly as received");
      }
    }
  }
  if (options.dryRun === true) {
    for (const other of ["raw", "field", "fields"] as const) {
      if (options[other] !== undefined) {
        throw conflict(other, "dryRun", "--dry-run sends nothing, so there is no response");
      }
    }
  }
  if (options.field !== undefined) {
    for (const other of ["fields", "json", "format", "pretty"] as const) {
      if (options[other] !== undefined) {
        throw conflict("field", other, "--field prints one bare value, in no format");
      }
    }
    return {
      kind: "field",
      name: checkedFields([options.field], allowedFields, "--field", command)[0] ?? "",
    };
  }
  if (options.raw === true) return { kind: "raw" };
  const fields =
    options.fields === undefined
      ? null
      : checkedFields(splitList(options.fields), allowedFields, "--fields", command);
  return format === "json"
    ? { kind: "json", fields, pretty: options.pretty === true }
    : { kind: format, fields };
}

function chosenFormat(options: GlobalOptions, command: string): OutputFormat {
  const impliesJson =
    options.json === true ? "--json" : options.pretty === true ? "--pretty" : null;
  if (impliesJson !== null && options.format !== undefined && options.format !== "json") {
    throw usageError(
      command,
      `${impliesJson} asks for JSON but --format asks for ${options.format}; choose one.`,
    );
  }
  return impliesJson === null ? (options.format ?? "table") : "json";
}

function checkedFields(
  names: readonly string[],
  allowed: readonly string[],
  flag: string,
  command: string,
): string[] {
  if (names.length === 0) {
    throw usageError(command, `${flag} needs at least one member name.`);
  }
  const unknown = names.filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    throw usageError(
      command,
      `${flag}: no member ${unknown.map((name) => JSON.stringify(name)).join(", ")}; \`svc ${command}\` has ${allowed.join(", ")}.`,
    );
  }
  return [...new Set(names)];
}

/** Whether failures are reported as the JSON envelope, read from the raw arguments. */
export function jsonRequested(argv: readonly string[]): { json: boolean; pretty: boolean } {
  const pretty = argv.includes("--pretty");
  const json =
    pretty ||
    argv.some(
      (arg, index) =>
        arg === "--json" ||
        arg === "--format=json" ||
        (arg === "--format" && argv[index + 1] === "json"),
    );
  return { json, pretty };
}
