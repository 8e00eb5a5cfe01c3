import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runProcess, type ProcessRun } from "./process.ts";

/**
 * The configuration directory `svc` is given unless a test names its own: a path that nothing
 * creates, so that no test reads or writes the credentials of the person running the tests.
 */
export const isolatedConfigHome = join(tmpdir(), `svc-test-no-config-${process.pid}`);

/** The built `svc` binary (tests run from dist/test, after `npm run build`). */
export const svcBin = fileURLToPath(new URL("../../src/bin/svc.js", import.meta.url));

/** What a run of `svc` produced: its exit code and whole output. */
export type SvcRun = ProcessRun;

export interface SvcRunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
  /**
   * A command that starts `svc` for the test: it is given node, the binary and the arguments
   * to run, for example `["bash", "-c", "ulimit -f 0; exec \"$@\"", "bash"]`.
   */
  readonly launcher?: readonly string[];
}

/** Runs `svc` to completion as a subprocess, with `env` on top of a clean environment. */
export function runSvc(args: readonly string[], options: SvcRunOptions = {}): Promise<SvcRun> {
  const [command = process.execPath, ...prefix] = options.launcher ?? [];
  const commandArgs = options.launcher === undefined ? [] : [...prefix, process.execPath];
  return runProcess(command, [...commandArgs, svcBin, ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: isolatedConfigHome,
      ...options.env,
    },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}
