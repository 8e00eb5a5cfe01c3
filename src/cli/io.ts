import type { Readable, Writable } from "node:stream";

/** The process's streams and environment, passed to commands so tests can supply their own. */
export interface CliIo {
  readonly stdin: Readable & { isTTY?: boolean };
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  /**
   * Ends a long-running command (`svc listen`) as Ctrl-C does; without it, SIGINT and SIGTERM
   * do. Tests running the CLI in process pass their own.
   */
  readonly interrupt?: AbortSignal;
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
}
