import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { isolatedConfigHome, svcBin } from "./svc.ts";

/** A running `svc listen`: its output as it comes, and ways to end it. */
export interface ListenProcess {
  readonly process: ChildProcess;
  /** Every line on stdout so far. */
  readonly lines: string[];
  /** Every line on stderr so far. */
  readonly notes: string[];
  /** Resolves with stdout's lines once there are at least `count`. */
  waitForLines(count: number, timeoutMs?: number): Promise<string[]>;
  /** Resolves with the first stderr line that matches. */
  waitForNote(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Ctrl-C (SIGINT); resolves with the exit code. */
  interrupt(): Promise<number | null>;
  /** Resolves with the exit code once it exits by itself. */
  readonly exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Ends every `svc listen` a test left running (a test that leaks one fails its `after`). */
export async function stopLeftoverListens(): Promise<number> {
  const left = [...running];
  for (const child of left) child.kill("SIGKILL");
  await Promise.all(left.map((child) => new Promise((resolve) => child.once("exit", resolve))));
  return left.length;
}

/** Starts `svc listen args…` with `env` on top of a clean environment. */
export function startListen(args: readonly string[], env: NodeJS.ProcessEnv): ListenProcess {
  const child = spawn(process.execPath, [svcBin, "listen", ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: isolatedConfigHome,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const lines: string[] = [];
  const notes: string[] = [];
  const changed = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      running.delete(child);
      resolve(code);
      for (const check of changed) check();
    }),
  );
  const record = (into: string[]) => (line: string) => {
    into.push(line);
    for (const check of changed) check();
  };
  createInterface({ input: child.stdout }).on("line", record(lines));
  createInterface({ input: child.stderr }).on("line", record(notes));

  /** Resolves with `found()` once it is defined; rejects after `timeoutMs` or at exit. */
  const until = <T>(found: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value !== undefined) {
          finish();
          resolve(value);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          finish();
          reject(
            new Error(`svc listen exited before ${what}:\n${[...lines, ...notes].join("\n")}`),
          );
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${what}:\n${[...lines, ...notes].join("\n")}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        changed.delete(check);
      };
      changed.add(check);
      check();
    });

  return {
    process: child,
    lines,
    notes,
    waitForLines: (count, timeoutMs = 15_000) =>
      until(
        () => (lines.length >= count ? [...lines] : undefined),
        `${count} line(s) on stdout`,
        timeoutMs,
      ),
    waitForNote: (pattern, timeoutMs = 15_000) =>
      until(() => notes.find((note) => pattern.test(note)), `a note like ${pattern}`, timeoutMs),
    async interrupt() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      return exited;
    },
    exited,
  };
}
