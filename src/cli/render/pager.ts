import { spawn } from "node:child_process";
import type { CliIo } from "../io.ts";

const DEFAULT_PAGER = "less -FRX";

/**
 * Writes human output to stdout, through the pager when a person would want one: stdout is a
 * terminal, paging is not turned off (`--no-pager`, or PAGER set to "" or `cat`), and the text
 * is longer than the screen. The pager is $PAGER (a shell command line), else `less -FRX`.
 * If the pager cannot be started, the text is written directly: output is never lost.
 */
export async function writePaged(io: CliIo, text: string, pagerAllowed: boolean): Promise<void> {
  const pager = io.env.PAGER ?? DEFAULT_PAGER;
  const rows = (io.stdout as { rows?: number }).rows ?? 24;
  const long = text.split("\n").length >= rows;
  if (!pagerAllowed || io.stdout.isTTY !== true || !long || ["", "cat"].includes(pager.trim())) {
    io.stdout.write(text);
    return;
  }
  const started = await runPager(pager, text, io.env);
  if (!started) io.stdout.write(text);
}

/** Resolves false when the pager could not be started at all. */
function runPager(command: string, text: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    // The pager draws on the terminal itself, so it inherits the real stdout and stderr.
    const child = spawn(command, { shell: true, stdio: ["pipe", "inherit", "inherit"], env });
    child.on("error", () => {
      resolve(false);
    });
    child.on("close", (code) => {
      // 127: the shell could not find the pager command.
      resolve(code !== 127);
    });
    // A pager quit before reading everything closes its input: that is not an error.
    child.stdin.on("error", () => undefined);
    child.stdin.end(text);
  });
}
