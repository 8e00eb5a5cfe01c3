import { PassThrough } from "node:stream";
import type { CliIo } from "../../src/cli/io.ts";
import { runCli } from "../../src/cli/run.ts";

/** What `runCli` printed, and its exit status. */
export interface CliRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A stream that collects what is written to it, and claims to be a terminal or not. */
function collector(terminal: boolean): PassThrough & { isTTY: boolean; text(): string } {
  const chunks: Buffer[] = [];
  const stream = Object.assign(new PassThrough(), { isTTY: terminal });
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  return Object.assign(stream, { text: () => Buffer.concat(chunks).toString("utf8") });
}

/**
 * Runs `svc` in this process (`runCli`) with in-memory streams: `terminal` makes stdout and
 * stderr say they are terminals (no pager: `--no-pager` is added). `env` is the whole
 * environment the command sees.
 */
export async function runCliInMemory(
  argv: readonly string[],
  options: {
    env: NodeJS.ProcessEnv;
    terminal?: boolean;
    stdin?: string;
    /** Ends a long-running command (`svc listen`) as Ctrl-C would. */
    interrupt?: AbortSignal;
  },
): Promise<CliRun> {
  const terminal = options.terminal ?? false;
  const stdout = collector(terminal);
  const stderr = collector(terminal);
  const stdin = Object.assign(new PassThrough(), { isTTY: false });
  stdin.end(options.stdin ?? "");
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    env: { NO_COLOR: "1", ...options.env },
    ...(options.interrupt === undefined ? {} : { interrupt: options.interrupt }),
  };
  const status = await runCli(terminal ? [...argv, "--no-pager"] : argv, io);
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}
