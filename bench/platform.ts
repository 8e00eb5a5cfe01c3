/**
 * `npm run bench:platform [-- --postgres] [--workspaces 10000] [--samples 500]`: the platform
 * API's latencies over HTTP against a real `svc server` (decision 42), driven as a platform's
 * backend would with one operator key: create-workspace and mint-key p50/p99 (one request at
 * a time, so each figure is a request's own time, not a queue's), then the workspace list's
 * p50/p99 once the server holds `--workspaces` of them (the first page of 100, a page deep in
 * the list through its cursor, and the lookup by external_id). SQLite unless `--postgres`.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { runProcess } from "../test/support/process.ts";
import { createTestCa } from "../test/support/tls.ts";
import { postgresDatabase } from "./postgres.ts";
import { startBenchService } from "./service.ts";
import { argument, percentile, pooled, progress, round } from "./stats.ts";

const postgres = process.argv.includes("--postgres");
const workspaceCount = Number(argument("--workspaces") ?? 10_000);
const samples = Number(argument("--samples") ?? 500);
const svcBin = fileURLToPath(new URL("../src/bin/svc.js", import.meta.url));

type Call = (
  method: "GET" | "POST",
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: unknown }>;

/** Milliseconds of each of `count` calls of `task`, one at a time; each must answer `status`. */
async function timed(count: number, status: number, task: (index: number) => ReturnType<Call>) {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    const answer = await task(index);
    times.push(performance.now() - started);
    if (answer.status !== status) throw new Error(`answered ${answer.status}, not ${status}`);
  }
  return { p50_ms: round(percentile(times, 50), 2), p99_ms: round(percentile(times, 99), 2) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-platform-"));
  const pg = postgres ? postgresDatabase() : null;
  if (pg !== null && "skipped" in pg) throw new Error(`PostgreSQL: ${pg.skipped}`);
  const database = pg?.url;
  const ca = await createTestCa(dir);
  const service = await startBenchService({
    dir,
    caCertPath: ca.caCertPath,
    ...(database === undefined ? {} : { database }),
  });
  const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
  try {
    // The operator key, made on the host as an operator makes it (same database and key).
    const keyFile = join(dir, "operator.key");
    const made = await runProcess(
      process.execPath,
      [
        svcBin,
        "admin",
        "keys",
        "create",
        "--operator",
        "--scopes",
        "workspaces:write",
        "--output",
        keyFile,
      ],
      {
        env: {
          PATH: process.env.PATH,
          SVC_DATA_DIR: join(dir, "data"),
          SVC_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
          ...(database === undefined ? {} : { SVC_DATABASE_URL: database }),
        },
      },
    );
    if (made.code !== 0) throw new Error(`operator key: ${made.stderr}`);
    const token = (await readFile(keyFile, "utf8")).trim();
    const call: Call = async (method, path, body) => {
      const response = await request(`${service.url}${path}`, {
        dispatcher: agent,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.statusCode, body: await response.body.json() };
    };

    progress(`create workspace × ${samples}`);
    const ids: string[] = [];
    const create = await timed(samples, 201, async (index) => {
      const answer = await call("POST", "/v1/workspaces", {
        name: `tenant ${index}`,
        external_id: `cus_${index}`,
        metadata: { plan: "pro" },
      });
      ids.push((answer.body as { id: string }).id);
      return answer;
    });
    progress(`mint key × ${samples}`);
    const mint = await timed(samples, 201, (index) =>
      call("POST", `/v1/workspaces/${ids[index % ids.length] ?? ""}/api-keys`, {
        scopes: ["webhooks:write", "events:write"],
      }),
    );

    progress(`filling to ${workspaceCount} workspaces`);
    await pooled(workspaceCount - samples - 1, 16, async (index) => {
      const answer = await call("POST", "/v1/workspaces", {
        name: `filler ${index}`,
        external_id: `fill_${index}`,
      });
      if (answer.status !== 201) throw new Error(`fill answered ${answer.status}`);
    });
    progress(`list × ${samples}`);
    const firstPage = await timed(samples, 200, () => call("GET", "/v1/workspaces?limit=100"));
    // A cursor halfway down the list: the index must seek, not scan, to get there.
    let cursor: string | null = null;
    for (let page = 0; page < workspaceCount / 200; page += 1) {
      const query: string = cursor === null ? "" : `&cursor=${cursor}`;
      const answer = await call("GET", `/v1/workspaces?limit=100${query}`);
      cursor = (answer.body as { next_cursor: string | null }).next_cursor;
    }
    const deepPage = await timed(samples, 200, () =>
      call("GET", `/v1/workspaces?limit=100&cursor=${cursor ?? ""}`),
    );
    const byExternalId = await timed(samples, 200, (index) =>
      call("GET", `/v1/workspaces?external_id=fill_${index * 7}`),
    );
    const engine = postgres ? "postgres" : "sqlite";
    const rows = [
      { engine, operation: "create workspace", ...create },
      { engine, operation: "mint key", ...mint },
      { engine, operation: `list, first page of 100 (${workspaceCount} workspaces)`, ...firstPage },
      {
        engine,
        operation: `list, page of 100 halfway (${workspaceCount} workspaces)`,
        ...deepPage,
      },
      { engine, operation: `list by external_id (${workspaceCount} workspaces)`, ...byExternalId },
    ];
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
  } finally {
    await agent.close();
    await service.stop();
    if (pg !== null && !("skipped" in pg)) pg.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
