import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { testDatabaseEnv } from "./database.ts";
import { runSvc, svcBin } from "./svc.ts";

/**
 * A real `svc server` process on a temporary data directory, listening on a free loopback
 * port, on the backend of the run (test/support/database.ts). Everything it logs is kept, so
 * tests can search the whole log.
 */
export interface TestServer {
  readonly url: string;
  readonly dataDir: string;
  /** The environment the server runs with; operator commands must share it. */
  readonly env: NodeJS.ProcessEnv;
  readonly process: ChildProcess;
  /** Every line the server wrote to stdout and stderr so far. */
  log(): string;
  /**
   * The first line of the log that `matches`, as soon as the server has written it: its log
   * goes out in blocks, up to 100 ms after the line was logged (decision 59).
   */
  logged(matches: (line: string) => boolean, what?: string): Promise<string>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

export interface TestServerOptions {
  /** Key files are written beside it; reuse it to restart on the same database. */
  readonly dataDir: string;
  readonly env?: NodeJS.ProcessEnv;
  /** `--role`; default all. */
  readonly role?: "all" | "api" | "worker";
  /** An installed `svc` to run (by its `#!` line) instead of this build's, under this Node. */
  readonly bin?: string;
}

/**
 * Test resolver table: names used by tests answer from here, never from the system
 * resolver. Documentation and public addresses are only classified, never contacted.
 */
export const testResolve = [
  "public.example.test=93.184.215.14",
  "public6.example.test=2606:2800:21f:cb07:6820:80da:af6b:8b2c",
  "dual.example.test=93.184.215.14",
  "dual.example.test=2606:2800:21f:cb07:6820:80da:af6b:8b2c",
  "private.example.test=10.0.0.7",
  "mixed.example.test=93.184.215.14",
  "mixed.example.test=192.168.1.20",
  "loopback.example.test=127.0.0.1",
  "metadata.example.test=169.254.169.254",
  "v6local.example.test=fd00::1",
  "empty.example.test=0.0.0.0",
  "compatible.example.test=::7f00:1",
].join(",");

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const dataDir = options.dataDir;
  const env: NodeJS.ProcessEnv = {
    SVC_DATA_DIR: dataDir,
    ...(await testDatabaseEnv(dataDir)),
    SVC_RESOLVE: testResolve,
    SVC_LOG_LEVEL: "info",
    // Test servers come and go by the dozen: small pools keep PostgreSQL's connections free.
    SVC_DATABASE_POOL_SIZE: "4",
    // Tests publish hundreds of events in a burst with one key; the request budget (decision
    // 45) is tested on its own (test/api/request-budget.test.ts) and a test may set it here.
    SVC_REQUEST_RATE: "0",
    ...options.env,
  };
  const role = options.role === undefined ? [] : ["--role", options.role];
  const args = ["server", "--port", "0", ...role];
  const [command, commandArgs] =
    options.bin === undefined ? [process.execPath, [svcBin, ...args]] : [options.bin, args];
  const child = spawn(command, commandArgs, {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  /** Who waits for a line to be logged. */
  const waiting = new Set<(line: string) => void>();
  const add = (line: string): void => {
    lines.push(line);
    for (const hear of waiting) hear(line);
  };
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      resolve(code);
    }),
  );
  createInterface({ input: child.stderr }).on("line", add);
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      add(line);
      const entry = parseLogLine(line);
      if (entry?.msg === "svc server ready" && typeof entry.url === "string") resolve(entry.url);
    });
    void exited.then((code) => {
      reject(new Error(`svc server exited with ${code} before it was ready:\n${lines.join("\n")}`));
    });
  });
  return {
    url,
    dataDir,
    env,
    process: child,
    log: () => lines.join("\n"),
    logged: (matches, what = "a log line") => {
      const found = lines.find(matches);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(hear);
          reject(
            new Error(`timed out waiting for ${what} in the server's log:\n${lines.join("\n")}`),
          );
        }, 10_000);
        const hear = (line: string): void => {
          if (!matches(line)) return;
          clearTimeout(timer);
          waiting.delete(hear);
          resolve(line);
        };
        waiting.add(hear);
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

function parseLogLine(line: string): Record<string, unknown> | null {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export interface Workspace {
  readonly id: string;
  /** The owner key, every scope. */
  readonly key: string;
}

/** `svc admin init` on the server's database: the first workspace and its owner key. */
export async function initialise(server: TestServer): Promise<Workspace> {
  const keyFile = join(server.dataDir, "..", `owner-${Date.now()}.key`);
  const run = await runSvc(["admin", "init", "--output", keyFile, "--json"], { env: server.env });
  if (run.code !== 0) throw new Error(`admin init failed: ${run.stdout}${run.stderr}`);
  const { data } = JSON.parse(run.stdout) as { data: { workspace_id: string } };
  return { id: data.workspace_id, key: (await readFile(keyFile, "utf8")).trim() };
}

/** Another workspace with a key of the given scopes, through the operator commands. */
export async function createWorkspace(
  server: TestServer,
  scopes = "webhooks:read,webhooks:write,events:read,events:write",
): Promise<Workspace> {
  const created = await runSvc(["admin", "workspaces", "create", "--name", "other", "--json"], {
    env: server.env,
  });
  if (created.code !== 0) throw new Error(`workspaces create failed: ${created.stderr}`);
  const id = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
  return { id, key: await createKey(server, id, scopes) };
}

/** A new API key for `workspaceId` with `scopes`; returns the token. */
export async function createKey(
  server: TestServer,
  workspaceId: string,
  scopes: string,
): Promise<string> {
  const keyFile = join(server.dataDir, "..", `key-${Date.now()}-${Math.random()}.key`);
  const run = await runSvc(
    [
      "admin",
      "keys",
      "create",
      "--workspace",
      workspaceId,
      "--scopes",
      scopes,
      "--output",
      keyFile,
    ],
    { env: server.env },
  );
  if (run.code !== 0) throw new Error(`keys create failed: ${run.stderr}`);
  return (await readFile(keyFile, "utf8")).trim();
}
