import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { isolatedConfigHome, svcBin } from "./svc.ts";
import { tempDir } from "./temp.ts";

const run = promisify(execFile);

/** `svc` running on a real pseudo-terminal (a tmux pane of its own tmux server). */
export interface Terminal {
  /** The pane's text; with `styled`, including its colour and style escape sequences. */
  screen(styled?: boolean): Promise<string>;
  /** Resolves with the screen once it matches; fails after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types a line and presses Enter. */
  typeLine(text: string): Promise<void>;
  /** Presses a key by its tmux name, such as `C-d` or `C-c`. */
  sendKey(key: string): Promise<void>;
  /** Resolves with svc's exit status once it has ended. */
  exitStatus(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Starts `svc args` in a new tmux server (its own socket, no user configuration) whose pane
 * stays after the command exits, so that its last screen and exit status can be read. The
 * command gets exactly `env` plus PATH, HOME, TERM and (unless `env` names one) a
 * configuration directory of no one's.
 */
export async function startTerminal(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  size: { columns: number; rows: number } = { columns: 200, rows: 40 },
): Promise<Terminal> {
  // The server's socket lives in a directory of its own, removed with it.
  const dir = await tempDir();
  const socket = join(dir.path, "tmux.sock");
  const tmux = async (...tmuxArgs: string[]): Promise<string> =>
    (await run("tmux", ["-S", socket, "-f", "/dev/null", ...tmuxArgs])).stdout;
  const variables = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    TERM: "screen",
    XDG_CONFIG_HOME: isolatedConfigHome,
    ...env,
  };
  const command = [
    "env",
    "-i",
    ...Object.entries(variables).map(([name, value]) => `${name}=${value}`),
    process.execPath,
    svcBin,
    ...args,
  ]
    .map(shellQuote)
    .join(" ");
  // Through a shell that outlives svc and shows its exit status: tmux's own record of it
  // (#{pane_dead_status}) proved unreliable when its child is node itself. The shell then
  // waits (until \`close\` kills the server): a pane whose last process exits right after
  // writing can lose that last line (under load, the screen once showed the pane dead with
  // status 0, the echo's, but not the echo's line).
  const shellCommand = `${command}; echo "[svc exited $?]"; exec sleep 86400`;
  await startSession(tmux, size, shellCommand).catch(async (error: unknown) => {
    await dir.cleanup();
    throw error;
  });

  // From the start of the history: the pane may scroll as tmux settles its size.
  const screen = (styled = false): Promise<string> =>
    tmux("capture-pane", "-p", "-S", "-", ...(styled ? ["-e"] : []), "-t", "svc");

  /** Polls the pane: tmux offers no event for "the screen now shows this". */
  const until = async <T>(check: () => Promise<T | null>, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await check();
      if (result !== null) return result;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; the screen shows:\n${await screen()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    screen,
    waitFor: (pattern, timeoutMs = 10_000) =>
      until(
        async () => {
          const text = await screen();
          return pattern.test(text) ? text : null;
        },
        String(pattern),
        timeoutMs,
      ),
    async typeLine(text) {
      await tmux("send-keys", "-t", "svc", "-l", text);
      await tmux("send-keys", "-t", "svc", "Enter");
    },
    async sendKey(key) {
      await tmux("send-keys", "-t", "svc", key);
    },
    exitStatus: (timeoutMs = 10_000) =>
      until(
        async () => {
          const exited = /^\[svc exited (\d+)\]$/m.exec(await screen());
          return exited === null ? null : Number(exited[1]);
        },
        "svc to exit",
        timeoutMs,
      ),
    async close() {
      // Already gone if the test failed before it started; nothing else can fail here.
      await tmux("kill-server").catch(() => undefined);
      await dir.cleanup();
    },
  };
}

function startSession(
  tmux: (...tmuxArgs: string[]) => Promise<string>,
  size: { columns: number; rows: number },
  shellCommand: string,
): Promise<string> {
  return tmux(
    "start-server",
    ";",
    "set-option",
    "-g",
    "remain-on-exit",
    "on",
    ";",
    "new-session",
    "-d",
    "-s",
    "svc",
    "-x",
    String(size.columns),
    "-y",
    String(size.rows),
    shellCommand,
  );
}
