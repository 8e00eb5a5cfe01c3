import { Option, type Command } from "commander";

/**
 * The global options of `svc`, declared once on the program: every command accepts them, in
 * any position (`svc --json webhooks list` and `svc webhooks list --json` are the same).
 */
export interface GlobalOptions {
  /**
   * The workspace to act on; else SERVICE_WORKSPACE_ID, else the saved credentials' default
   * (`svc auth switch`), else the credentials' only one.
   */
  readonly workspace?: string;
  /** Same as `--format json`. */
  readonly json?: boolean;
  /** Default `table`: a table for lists, `key: value` lines for one resource. */
  readonly format?: OutputFormat;
  /** Indent JSON; implies `--format json`. */
  readonly pretty?: boolean;
  /** Print one member's bare value (one line per item of a list). */
  readonly field?: string;
  /** Comma-separated members to show: columns of a table, members of JSON or YAML. */
  readonly fields?: string;
  /** Print the API's response body as received. */
  readonly raw?: boolean;
  /** A new file: the secret of a command that issues one, else the printed result. */
  readonly output?: string;
  /** False with `--no-pager`. Default true: long output on a terminal goes through $PAGER. */
  readonly pager?: boolean;
  /** Send nothing; print the request that would be sent. */
  readonly dryRun?: boolean;
  /** Answer yes to confirmation prompts. */
  readonly yes?: boolean;
  /** Read the request as a JSON object from standard input. */
  readonly stdin?: boolean;
  /** Same as `--stdin`. */
  readonly fromStdin?: boolean;
  /** Follow every page of a list. */
  readonly pageAll?: boolean;
  /** Report each request's timing on stderr. */
  readonly timing?: boolean;
}

export const OUTPUT_FORMATS = ["table", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The global options that change what a command does, not only how its result is printed.
 * A command states which of them it acts on; given one it does not act on, it refuses with a
 * usage error instead of ignoring it (`svc admin init --dry-run` must not initialise anything).
 */
export const ACTING_OPTIONS = {
  workspace: ["workspace"],
  output: ["output"],
  raw: ["raw"],
  fields: ["field", "fields"],
  dryRun: ["dryRun"],
  yes: ["yes"],
  stdin: ["stdin", "fromStdin"],
  pageAll: ["pageAll"],
  timing: ["timing"],
} as const satisfies Record<string, readonly (keyof GlobalOptions)[]>;
export type ActingOption = keyof typeof ACTING_OPTIONS;

/** How each global option is written on the command line, for messages. */
export const FLAG_NAMES: Readonly<Record<keyof GlobalOptions, string>> = {
  workspace: "--workspace",
  json: "--json",
  format: "--format",
  pretty: "--pretty",
  field: "--field",
  fields: "--fields",
  raw: "--raw",
  output: "--output",
  pager: "--no-pager",
  dryRun: "--dry-run",
  yes: "--yes",
  stdin: "--stdin",
  fromStdin: "--from-stdin",
  pageAll: "--page-all",
  timing: "--timing",
};

export function readsStdin(options: GlobalOptions): boolean {
  return options.stdin === true || options.fromStdin === true;
}

export function addGlobalOptions(program: Command): Command {
  return program
    .option(
      "--workspace <workspace-id>",
      "workspace to act on (default: env SERVICE_WORKSPACE_ID, else the default chosen by svc auth switch, else the credentials' only workspace)",
    )
    .option("--json", "print one JSON document on stdout: {ok, data} or {ok, error}")
    .addOption(
      new Option("--format <format>", "output format: table (the default), json or yaml").choices(
        OUTPUT_FORMATS,
      ),
    )
    .option("--pretty", "indent JSON output (implies --format json)")
    .option("--field <name>", "print only this member's bare value, one line per item")
    .option("--fields <names>", "comma-separated members to show (table columns, JSON members)")
    .option("--raw", "print the API's response body exactly as received")
    .option(
      "--output <path>",
      "new file (mode 0600, never overwritten): the secret of webhooks create, keys create, admin init and admin keys create, the copy admin backup makes; for other API commands the printed result",
    )
    .option("--no-pager", "never page output (default: long output on a terminal goes to $PAGER)")
    .option("--dry-run", "send nothing; print the request that would be sent, secrets redacted")
    .option("-y, --yes", "answer yes to confirmation prompts (needed without a terminal)")
    .option("--stdin", "read the request as a JSON object from standard input")
    .option("--from-stdin", "same as --stdin")
    .option("--page-all", "list: follow every page (default: the first page and a hint)")
    .option("--timing", "report each API request's timing on stderr");
}
