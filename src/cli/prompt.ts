import { createInterface } from "node:readline";
import type { CliIo } from "./io.ts";

/** A person can be asked: the question shows on a terminal and the answer comes from one. */
export function isInteractive(io: CliIo): boolean {
  return io.stdin.isTTY === true && io.stderr.isTTY === true;
}

/**
 * Asks a yes/no question on stderr; only `y` or `yes` (any case) is yes. End of input and
 * Ctrl-C count as no.
 */
export function confirm(io: CliIo, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const reader = createInterface({ input: io.stdin, output: io.stderr });
    let answered = false;
    reader.on("SIGINT", () => {
      reader.close();
    });
    reader.on("close", () => {
      if (!answered) {
        io.stderr.write("\n");
        resolve(false);
      }
    });
    reader.question(`${question} [y/N] `, (answer) => {
      answered = true;
      reader.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}
