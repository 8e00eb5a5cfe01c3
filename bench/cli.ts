import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestCa } from "../test/support/tls.ts";
import { argument, percentile, progress, round } from "./stats.ts";

/**
 * `npm run bench:cli [-- --runs 30] [-- --svc <dist/src/bin/svc.js of another build>]`: how long `svc` takes to answer, against the least Node
 * itself takes (issue 33). Like hyperfine: each command is run a few times unmeasured (to
 * warm the page cache and Node's compile cache), then `--runs` times, the commands taking
 * turns so that the machine's load drifts over all of them alike; it reports each median
 * (and the fastest run, which load inflates least), the mean CPU time per run, and three
 * ratios, of the medians and of the CPU times:
 * - `svc --version` against `node -e 0` (target: at most 1.5);
 * - `svc webhooks --help` against `node -e 0` (target: at most 2);
 * - `svc webhooks list` against a bare `node` script sending the same HTTPS request with
 *   fetch (target: at most 2). Both ask a local HTTPS server this bench runs, with a loopback
 *   certificate both trust through NODE_EXTRA_CA_CERTS.
 * The binary is the built one (`dist/src/bin/svc.js`), run as its shebang runs it.
 */

const runs = Number(argument("--runs") ?? "30");
const warmUps = 3;
/** `--svc <path>` times another build's binary (say, main's, for a before-and-after). */
const svcBin = argument("--svc") ?? fileURLToPath(new URL("../src/bin/svc.js", import.meta.url));
const nodeFlags = ["--max-semi-space-size=16"]; // the shebang's (src/bin/svc.ts)

const WORKSPACE = "ws_0b7c3d5e9f1a2b4c6d8e0f12";
const API_KEY = "sk_bench_cli";
const PAGE = JSON.stringify({
  data: Array.from({ length: 5 }, (_, index) => ({
    id: `dst_5f0c2a9e81b34d7c6a1e0f9${index}`,
    url: `https://example.com/hooks/${index}`,
    events: ["job.completed"],
    active: true,
    created_at: "2026-11-25T10:00:00.000Z",
    updated_at: "2026-11-25T10:00:00.000Z",
  })),
  next_cursor: null,
});

/** The bare script: the same GET with the same credentials, its body printed. */
function bareFetchScript(url: string): string {
  return `const r = await fetch(${JSON.stringify(url)}, { headers: { authorization: "Bearer ${API_KEY}", accept: "application/json" } });
process.stdout.write(await r.text());
if (r.status !== 200) process.exitCode = 1;
`;
}

interface Case {
  readonly name: string;
  readonly argv: readonly string[];
  samples: number[];
  /** CPU time (user + system) of all its measured runs, ms. */
  cpuMs: number;
}

/**
 * The CPU time of this process's children that have ended (cutime + cstime of /proc/self/stat),
 * in ms. Counted in clock ticks (10 ms), so one run's share is coarse, but summed over every
 * run it gives the mean CPU per run, which a loaded machine inflates far less than wall time.
 */
async function childrenCpuMs(): Promise<number> {
  const fields = (await readFile("/proc/self/stat", "utf8")).split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

function runOnce(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, argv, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const elapsed = performance.now() - started;
      if (code === 0) resolve(elapsed);
      else reject(new Error(`${argv.join(" ")} exited ${String(code)}: ${stderr}`));
    });
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-cli-"));
  const ca = await createTestCa(join(dir, "ca"));
  const server = createServer({ cert: ca.certPem, key: ca.keyPem }, (request, response) => {
    const expected = `/v1/workspaces/${WORKSPACE}/webhooks`;
    const ok = request.url === expected && request.headers.authorization === `Bearer ${API_KEY}`;
    response.writeHead(ok ? 200 : 404, { "content-type": "application/json" });
    response.end(ok ? PAGE : '{"error":{"code":"not_found","message":"no"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const script = join(dir, "bare-fetch.mjs");
  await writeFile(script, bareFetchScript(`${url}/v1/workspaces/${WORKSPACE}/webhooks`));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir, // no saved credentials, no config of the person running the bench
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    NODE_EXTRA_CA_CERTS: ca.caCertPath,
    SERVICE_API_URL: url,
    SERVICE_API_KEY: API_KEY,
    SERVICE_WORKSPACE_ID: WORKSPACE,
  };
  const cases: Case[] = [
    { name: "node -e 0", argv: ["-e", "0"], samples: [], cpuMs: 0 },
    { name: "svc --version", argv: [...nodeFlags, svcBin, "--version"], samples: [], cpuMs: 0 },
    {
      name: "svc webhooks --help",
      argv: [...nodeFlags, svcBin, "webhooks", "--help"],
      samples: [],
      cpuMs: 0,
    },
    { name: "node bare-fetch.mjs", argv: [script], samples: [], cpuMs: 0 },
    {
      name: "svc webhooks list",
      argv: [...nodeFlags, svcBin, "webhooks", "list"],
      samples: [],
      cpuMs: 0,
    },
  ];
  try {
    progress(`${warmUps} warm-up and ${runs} measured runs of ${cases.length} commands, in turn`);
    for (let round_ = 0; round_ < warmUps + runs; round_ += 1) {
      for (const item of cases) {
        const cpuBefore = await childrenCpuMs();
        const elapsed = await runOnce(item.argv, env);
        if (round_ >= warmUps) {
          item.samples.push(elapsed);
          item.cpuMs += (await childrenCpuMs()) - cpuBefore;
        }
      }
    }
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
  const median = (name: string): number =>
    percentile(cases.find((item) => item.name === name)?.samples ?? [], 50);
  console.log(
    `load average (1, 5, 15 min): ${loadavg()
      .map((value) => round(value, 2))
      .join(", ")}`,
  );
  console.log("command                   median ms   fastest ms   CPU ms per run");
  for (const item of cases) {
    console.log(
      `${item.name.padEnd(26)}${String(round(percentile(item.samples, 50))).padStart(9)}${String(round(Math.min(...item.samples))).padStart(13)}${String(round(item.cpuMs / item.samples.length)).padStart(17)}`,
    );
  }
  const cpu = (name: string): number => {
    const item = cases.find((each) => each.name === name);
    return item === undefined ? Number.NaN : item.cpuMs / item.samples.length;
  };
  const ratios = [
    ["svc --version / node -e 0", median("svc --version") / median("node -e 0"), 1.5],
    ["svc webhooks --help / node -e 0", median("svc webhooks --help") / median("node -e 0"), 2],
    [
      "svc webhooks list / bare fetch",
      median("svc webhooks list") / median("node bare-fetch.mjs"),
      2,
    ],
  ] as const;
  const cpuRatios = [
    cpu("svc --version") / cpu("node -e 0"),
    cpu("svc webhooks --help") / cpu("node -e 0"),
    cpu("svc webhooks list") / cpu("node bare-fetch.mjs"),
  ];
  console.log("ratio                               of medians   of CPU   target");
  ratios.forEach(([name, ratio, target], index) => {
    const verdict = ratio <= target ? "met" : "NOT met";
    console.log(
      `${name.padEnd(36)}${ratio.toFixed(2).padStart(10)}${(cpuRatios[index] ?? Number.NaN).toFixed(2).padStart(9)}   ≤ ${target} (medians: ${verdict})`,
    );
  });
}

await main();
