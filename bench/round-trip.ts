/**
 * `npm run bench:round-trip -- [--count 3000]`: what one statement's round trip costs a
 * PostgreSQL backend, whatever the statement does (decision 66). One connection runs, one at a
 * time, `--count` times each: `SELECT 1` (the simple protocol, as BEGIN and COMMIT go), a
 * prepared `SELECT $1` (the extended protocol, as the store's statements go), `BEGIN`,
 * `SET LOCAL …` and `COMMIT` as three messages and as two, and a prepared statement that
 * unpacks a JSON batch of 1 and of 25 rows as the publish does. Prints, per iteration of each
 * case, the backend's CPU (from /proc/<pid>/schedstat, in nanoseconds: the server must run
 * on this machine) and the client's wall time. The backend's CPU for a statement that does
 * nothing is its round trip: the socket's read and write and the wake-up, which a virtual
 * machine makes dear. SVC_BENCH_POSTGRES_URL picks the server.
 */
import pg from "pg";
import { connectionConfig } from "../src/store/postgres/connection-config.ts";
import { readFile } from "node:fs/promises";
import { argument, round } from "./stats.ts";

const count = Number(argument("--count") ?? 3000);

const row = [
  "evt_019abcdef0123456789abcdef00",
  "ws_b724440081301de517003204",
  "job.completed",
  JSON.stringify({ type: "job.completed", data: { job_id: "job_123456", status: "completed" } }),
  "2026-11-01",
  1_764_226_800_000,
  0,
  null,
];
const unpack = `SELECT count(*) FROM (SELECT CAST(r ->> 0 AS TEXT) AS id,
    CAST(r ->> 3 AS TEXT) AS body, CAST(r ->> 5 AS BIGINT) AS created_at,
    CAST(r ->> 6 AS INTEGER) AS position
  FROM jsonb_array_elements(CAST($1 AS JSONB)) AS j(r)) x WHERE length(body) > 0`;

async function main(): Promise<void> {
  const client = new pg.Client(
    connectionConfig(process.env.SVC_BENCH_POSTGRES_URL ?? "postgres://127.0.0.1:5432/postgres"),
  );
  await client.connect();
  try {
    const [backend] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
    // The first field of schedstat: the time on a CPU, in nanoseconds.
    const backendCpuUs = async (): Promise<number> =>
      Number((await readFile(`/proc/${backend?.pid ?? 0}/schedstat`, "utf8")).split(" ")[0]) / 1000;
    const cases: [string, () => Promise<unknown>][] = [
      ["SELECT 1 (simple protocol)", () => client.query("SELECT 1")],
      ["SELECT $1 (prepared)", () => client.query({ name: "one", text: "SELECT $1", values: [1] })],
      [
        "BEGIN, SET LOCAL, COMMIT (three messages)",
        async () => {
          await client.query("BEGIN");
          await client.query("SET LOCAL enable_seqscan = off");
          await client.query("COMMIT");
        },
      ],
      [
        "BEGIN; SET LOCAL, COMMIT (two messages)",
        async () => {
          await client.query("BEGIN; SET LOCAL enable_seqscan = off");
          await client.query("COMMIT");
        },
      ],
      ...[1, 25].map((rows): [string, () => Promise<unknown>] => {
        const batch = JSON.stringify(Array.from({ length: rows }, () => row));
        return [
          `a JSON batch of ${rows} unpacked (prepared)`,
          () => client.query({ name: "unpack", text: unpack, values: [batch] }),
        ];
      }),
    ];
    for (const [label, run] of cases) {
      for (let i = 0; i < 200; i += 1) await run();
      const cpu = await backendCpuUs();
      const started = performance.now();
      for (let i = 0; i < count; i += 1) await run();
      const wallUs = ((performance.now() - started) * 1000) / count;
      const backendUs = ((await backendCpuUs()) - cpu) / count;
      console.log(
        JSON.stringify({ case: label, backend_us: round(backendUs), wall_us: round(wallUs) }),
      );
    }
  } finally {
    await client.end();
  }
}

await main();
