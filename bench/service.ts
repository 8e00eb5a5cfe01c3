import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { runProcess } from "../test/support/process.ts";

/** This tree's `svc`; `startBenchService` can run another build's (bench/ab.ts). */
const ownSvcBin = fileURLToPath(new URL("../src/bin/svc.js", import.meta.url));

/** A running `svc server` under measurement, with an owner key for its first workspace. */
export interface BenchService {
  readonly url: string;
  /** `--role worker` processes beside the server (`startBenchService`'s `workers`). */
  readonly workers: readonly ChildProcess[];
  readonly workspaceId: string;
  /** The owner API key (every scope), for a client of the bench's own (`svc listen`). */
  readonly token: string;
  readonly process: ChildProcess;
  /** POSTs/GETs JSON to the API over a keep-alive pool; returns status and parsed body. */
  call(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }>;
  /** The server process's peak resident set (VmHWM), in MiB. */
  peakRssMb(): Promise<number>;
  /** The server process's resident set now (VmRSS), in MiB. */
  rssMb(): Promise<number>;
  stop(): Promise<void>;
}

/** A real `svc server`'s: its operator commands, on its database. */
export interface OperatorAccess {
  /** Runs `svc args…` with the server's settings (`svc admin …`); resolves with its stdout. */
  svc(args: string[]): Promise<string>;
}

/** A memory figure of `/proc/<pid>/status` (`VmHWM`, `VmRSS`), in MiB. */
async function statusMb(child: ChildProcess, field: string): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, "utf8");
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match?.[1] === undefined ? Number.NaN : Number(match[1]) / 1024;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  return port;
}

/** The Node flags of `svc`'s shebang line (`#!/usr/bin/env -S node …`), as `svc server` runs. */
async function nodeFlags(svcBin: string): Promise<string[]> {
  const [first = ""] = (await readFile(svcBin, "utf8")).split("\n", 1);
  return first.split(/\s+/).filter((word) => word.startsWith("--"));
}

async function run(svcBin: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const result = await runProcess(process.execPath, [svcBin, ...args], { env });
  if (result.code !== 0)
    throw new Error(`svc ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/**
 * Initialises a database (`database`: a SQLite data directory's file, or a postgres:// URL)
 * and starts `svc server` on it with the service's default settings, except that loopback is
 * allowlisted and the bench CA trusted. Logs go to a file, as a deployment's would.
 */
export async function startBenchService(options: {
  dir: string;
  caCertPath: string;
  database?: string;
  extraEnv?: NodeJS.ProcessEnv;
  /** The `svc` to run: another build's `dist/src/bin/svc.js`; this tree's by default. */
  svcBin?: string;
  /**
   * Keep the request budget (`requestRate`, decision 45) at its default; else it is off: the
   * throughput benches drive one key far past it, to measure the engine, not the budget.
   */
  requestBudget?: boolean;
  /**
   * `--role worker` processes to start beside the server on its database (PostgreSQL); the
   * server then runs `--role api`. None by default: one `--role all` server.
   */
  workers?: number;
}): Promise<BenchService & OperatorAccess> {
  const svcBin = options.svcBin ?? ownSvcBin;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SVC_DATA_DIR: join(options.dir, "data"),
    SVC_ALLOW_PRIVATE_NETWORKS: "127.0.0.0/8,::1/128",
    NODE_EXTRA_CA_CERTS: options.caCertPath,
    SVC_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
    ...(options.database === undefined ? {} : { SVC_DATABASE_URL: options.database }),
    ...(options.requestBudget === true ? {} : { SVC_REQUEST_RATE: "0" }),
    ...(options.workers === undefined ? {} : { SVC_ROLE: "api" }),
    ...options.extraEnv,
    // A profiler's preload for the server alone (`--import …`), never the bench's own, and
    // its settings (variables named SVC_BENCH_PRELOAD_…).
    ...(process.env.SVC_BENCH_SERVER_NODE_OPTIONS === undefined
      ? {}
      : { NODE_OPTIONS: process.env.SVC_BENCH_SERVER_NODE_OPTIONS }),
    ...Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name.startsWith("SVC_BENCH_PRELOAD_")),
    ),
  };
  const keyFile = join(options.dir, `owner-${Date.now()}.key`);
  const init = JSON.parse(
    await run(svcBin, ["admin", "init", "--output", keyFile, "--json"], env),
  ) as {
    data: { workspace_id: string };
  };
  const token = (await readFile(keyFile, "utf8")).trim();
  const start = async (role: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number }> => {
    const port = await freePort();
    // The server writes its log straight to a file, as under a deployment's log redirection:
    // through a pipe, this process would spend the machine's time copying it.
    const log = openSync(join(options.dir, `server-${port}.log`), "a");
    const child = spawn(
      process.execPath,
      [...(await nodeFlags(svcBin)), svcBin, "server", "--port", String(port)],
      { env: { ...env, ...role }, stdio: ["ignore", log, log] },
    );
    closeSync(log);
    return { child, port };
  };
  const { child, port } = await start({});
  const url = `http://127.0.0.1:${port}`;
  const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  for (let tries = 0; ; tries += 1) {
    try {
      const health = await request(`${url}/healthz`, { dispatcher: agent });
      await health.body.dump();
      if (health.statusCode === 200) break;
    } catch {
      if (tries > 200) {
        child.kill("SIGTERM");
        throw new Error("svc server did not start");
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // Workers start once the server has migrated the database, as a deployment's would.
  const workers: ChildProcess[] = [];
  for (let index = 0; index < (options.workers ?? 0); index += 1) {
    workers.push((await start({ SVC_ROLE: "worker" })).child);
  }
  const workspaceId = init.data.workspace_id;
  return {
    url,
    workspaceId,
    token,
    process: child,
    workers,
    async call(method, path, body) {
      const response = await request(`${url}/v1/workspaces/${workspaceId}${path}`, {
        dispatcher: agent,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.statusCode, body: await response.body.json() };
    },
    svc: (args) => run(svcBin, args, env),
    peakRssMb: () => statusMb(child, "VmHWM"),
    rssMb: () => statusMb(child, "VmRSS"),
    async stop() {
      await Promise.all(
        [child, ...workers].map(async (each) => {
          each.kill("SIGTERM");
          await new Promise((resolve) => each.once("exit", resolve));
        }),
      );
      await agent.close();
    },
  };
}
