import type { CliIo } from "../io.ts";

/** Text styles for one stream: escape sequences on a colour terminal, plain text otherwise. */
export interface Style {
  bold(text: string): string;
  red(text: string): string;
}

/** No styling: for files, pipes, and NO_COLOR. */
export const plainStyle: Style = { bold: (text) => text, red: (text) => text };
const ansi: Style = {
  bold: (text) => `\u001b[1m${text}\u001b[22m`,
  red: (text) => `\u001b[31m${text}\u001b[39m`,
};

/**
 * Colour only on a terminal, and never when NO_COLOR is set to anything but the empty string
 * (https://no-color.org) or the terminal is `dumb`.
 */
export function styleFor(stream: CliIo["stdout"], env: NodeJS.ProcessEnv): Style {
  const wanted = stream.isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb";
  return wanted ? ansi : plainStyle;
}
