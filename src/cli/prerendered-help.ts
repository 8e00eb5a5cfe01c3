import { readFileSync, statSync } from "node:fs";

/**
 * `svc <command> --help` without loading commander and the command tree (decision 51's
 * addendum): `npm run build` runs every command's `--help` through `runCli` and keeps what it
 * printed in `help.json` beside this module; `svc` prints it from there when the command line is
 * a command's words and `--help`, and its output is not a terminal of another width than the
 * one the texts were made for. Anything else (a global option before `--help`, a typo, a wider
 * terminal, no file, a file older than the command tree) goes through commander as before, so
 * the texts are an exact copy or are not used.
 */

/** The width commander wraps help to when its output is not a terminal. */
export const PRERENDERED_HELP_WIDTH = 80;

/** The texts, each under its command's words (`webhooks list`; `""` for `svc` itself). */
export interface PrerenderedHelp {
  readonly width: number;
  readonly texts: Readonly<Record<string, string>>;
}

/** Where `npm run build` writes the texts, and the module whose age they must not be below. */
export const PRERENDERED_HELP_FILE = new URL("./help.json", import.meta.url);
const PROGRAM_MODULE = new URL("./program.js", import.meta.url);

/**
 * The command whose help the arguments ask for, as its words joined by spaces, when they are
 * nothing but lower-case command words followed by `--help` or `-h`; otherwise undefined.
 */
export function helpRequestPath(argv: readonly string[]): string | undefined {
  const last = argv.at(-1);
  if (last !== "--help" && last !== "-h") return undefined;
  const words = argv.slice(0, -1);
  return words.every((word) => /^[a-z][a-z-]*$/.test(word)) ? words.join(" ") : undefined;
}

/**
 * The help `svc` would print for `argv`, read from the texts the build wrote; undefined when it
 * must be rendered by commander (see above). `files` is for tests.
 */
export function prerenderedHelp(
  argv: readonly string[],
  stdout: { readonly isTTY?: boolean; readonly columns?: number },
  files: { readonly texts: URL; readonly program: URL } = {
    texts: PRERENDERED_HELP_FILE,
    program: PROGRAM_MODULE,
  },
): string | undefined {
  const path = helpRequestPath(argv);
  if (path === undefined) return undefined;
  if (stdout.isTTY === true && stdout.columns !== PRERENDERED_HELP_WIDTH) return undefined;
  const written = statSync(files.texts, { throwIfNoEntry: false });
  const program = statSync(files.program, { throwIfNoEntry: false });
  // A tree compiled after the texts were written may declare other options: commander decides.
  if (written === undefined || program === undefined || written.mtimeMs < program.mtimeMs) {
    return undefined;
  }
  const help = JSON.parse(readFileSync(files.texts, "utf8")) as PrerenderedHelp;
  if (help.width !== PRERENDERED_HELP_WIDTH) return undefined;
  return Object.hasOwn(help.texts, path) ? help.texts[path] : undefined;
}
