import { spawn } from "node:child_process";

export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to completion, feeding it `input` on stdin and collecting its output. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; input?: string; cwd?: string },
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      resolve({ code, stdout, stderr });
    });
    // A child may exit before it reads its input (bash -c never does): the pipe's EPIPE then
    // says nothing its exit status and output do not.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "", () => undefined);
  });
}

/**
 * What npm needs of this environment to reach the registry as the user's own npm does: the
 * machine's extra certificate authorities and proxies, when it has them (a registry behind a
 * TLS-inspecting proxy is refused without them). Tests that run npm in a clean environment
 * pass these, and nothing else of it.
 */
export function registryAccessEnv(): NodeJS.ProcessEnv {
  const names = [
    "NODE_EXTRA_CA_CERTS",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
  ];
  return Object.fromEntries(
    names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])),
  );
}
