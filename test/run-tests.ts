/**
 * `npm run test:only`: the whole suite once per backend, SQLite and PostgreSQL (one suite,
 * parameterised by `SVC_TEST_BACKEND`; see test/support/database.ts).
 *
 * - `SVC_TEST_POSTGRES_URL` (default postgres://127.0.0.1:5432/test): the PostgreSQL whose
 *   user may create databases; each server fixture gets a database of its own there.
 * - `SVC_TEST_BACKENDS` (default `sqlite,postgres`): the backends to run.
 * - `SVC_TEST_CONCURRENCY` (default twice the cores): test files at most at once; those beyond
 *   the cores' count start only while the machine's load leaves room (see roomForMore).
 * - Arguments, if any, replace the test files (globs as `node --test` takes them).
 *
 * When that PostgreSQL cannot be used, its run is skipped with a banner that says why,
 * except on CI (`CI=true`), where that is a failure: CI must never skip it.
 *
 * Both backends' files share one pool of slots, the longest first. Most files spend much of
 * their time waiting (for a child `svc`, a receiver, a retry's timer, a browser), so up to
 * twice as many files as cores keep idle cores busy, as long as the load says they are idle;
 * and `node --test` alone orders files by name,
 * which left the longest (the browser tests, the package install) to run last, two at a time,
 * on SQLite and then again on PostgreSQL. Each file runs in one process of its own
 * (`node --test --test-isolation=none <file>`, as `node --test` would run it in a child), and
 * its report is printed whole when it ends, so that the two backends' reports do not mix.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { glob } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { adminQuery, testPostgresUrl, type TestBackend } from "./support/database.ts";

const defaultFiles = ["dist/test/**/*.test.js"];

/**
 * Files that take longest (each 20–60 s on two cores), started first so that none of them is
 * the tail of the run; the rest follow by name. A path matching an earlier entry goes earlier.
 */
const longestFirst = [
  "/ui/dashboard.test.js",
  "/e2e/quickstart-readme.test.js",
  "/ui/",
  "/packaging/",
  "/scale/",
  "/e2e/webhooks-options.test.js",
  "/delivery/isolation.test.js",
  "/delivery/repair-through-circuit.test.js",
  "/cli/auth.test.js",
  "/e2e/",
  "/delivery/",
];

const testTimeout = "--test-timeout=120000";
/** Node 23.6+ spells it without `experimental-`; 22.13 only with it. */
const inOneProcess = process.allowedNodeEnvironmentFlags.has("--test-isolation")
  ? "--test-isolation=none"
  : "--experimental-test-isolation=none";

async function postgresProblem(): Promise<string | null> {
  try {
    const [role] = await adminQuery(
      "SELECT rolcreatedb OR rolsuper AS may_create FROM pg_roles WHERE rolname = current_user",
    );
    return role?.may_create === true ? null : "its user may not create databases (CREATEDB)";
  } catch (error) {
    return `${redact(testPostgresUrl)} cannot be reached: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:[redacted]@");
}

function banner(lines: readonly string[]): void {
  const rule = "#".repeat(78);
  console.error(["", rule, ...lines.map((line) => `#  ${line}`), rule, ""].join("\n"));
}

async function testFiles(patterns: readonly string[]): Promise<string[]> {
  const files = new Set<string>();
  for (const pattern of patterns) {
    if (!/[*?[{]/.test(pattern)) files.add(pattern);
    else for await (const file of glob(pattern)) files.add(file);
  }
  const rank = (file: string): number => {
    const index = longestFirst.findIndex((fragment) => file.includes(fragment));
    return index === -1 ? longestFirst.length : index;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

interface FileRun {
  file: string;
  backend: TestBackend;
}

interface Totals {
  tests: number;
  pass: number;
  fail: number;
  skipped: number;
  cancelled: number;
  todo: number;
}

const label = (backend: TestBackend): string => (backend === "sqlite" ? "SQLite" : "PostgreSQL");

/** Runs one file on one backend; its report is printed whole when it ends. */
function runFile(run: FileRun, runId: string, totals: Totals): Promise<boolean> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--test", inOneProcess, testTimeout, "--test-reporter=spec", run.file],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, SVC_TEST_BACKEND: run.backend, SVC_TEST_RUN_ID: runId },
      },
    );
    const output: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const report = Buffer.concat(output).toString("utf8");
      for (const key of Object.keys(totals) as (keyof Totals)[]) {
        const count = new RegExp(`^ℹ ${key} (\\d+)$`, "m").exec(report)?.[1];
        totals[key] += Number(count ?? 0);
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const passed = code === 0;
      const outcome = passed ? "passed" : `FAILED (${signal ?? `exit ${code}`})`;
      process.stdout.write(
        `\n─── ${run.file} on ${label(run.backend)}: ${outcome} in ${seconds} s\n${report}`,
      );
      resolve(passed);
    });
  });
}

/**
 * Whether a slot beyond the cores' count may start a file now: only while the machine is not
 * already busy (the last minute's load average under one and a half runnable processes a
 * core). Files that wait leave the cores idle, and then the extra slots fill them; when the
 * cores are saturated (by these tests, or by anything else on the machine), more files at
 * once only stretch every file's timers, so those slots wait.
 */
function roomForMore(): boolean {
  const [lastMinute = 0] = loadavg();
  return lastMinute < 1.5 * availableParallelism();
}

async function runAll(runs: FileRun[], runId: string, concurrency: number): Promise<FileRun[]> {
  const totals: Totals = { tests: 0, pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0 };
  const failed: FileRun[] = [];
  const started = performance.now();
  const cores = availableParallelism();
  let next = 0;
  const slot = async (index: number): Promise<void> => {
    while (next < runs.length) {
      if (index >= cores && !roomForMore()) {
        await delay(2_000);
        continue;
      }
      const run = runs[next++];
      if (run !== undefined && !(await runFile(run, runId, totals))) failed.push(run);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, runs.length) }, (_, index) => slot(index)),
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const counts = Object.entries(totals)
    .map(([key, value]) => `${key} ${value}`)
    .join(", ");
  console.log(
    `\n=== ${runs.length} file runs, up to ${concurrency} at a time, in ${seconds} s: ${counts}`,
  );
  for (const run of failed) console.log(`FAILED: ${run.file} on ${label(run.backend)}`);
  return failed;
}

/** Drops the databases of this run that a test file left behind (a crash, a forgotten dispose). */
async function dropLeftovers(runId: string): Promise<void> {
  const rows = await adminQuery(
    `SELECT datname FROM pg_database WHERE datname LIKE 'svc\\_test\\_${runId}\\_%'`,
  );
  for (const row of rows) {
    await adminQuery(`DROP DATABASE IF EXISTS ${String(row.datname)} WITH (FORCE)`);
  }
  if (rows.length > 0) console.error(`dropped ${rows.length} database(s) left by the tests`);
}

async function main(): Promise<number> {
  const files = await testFiles(process.argv.length > 2 ? process.argv.slice(2) : defaultFiles);
  const names = (process.env.SVC_TEST_BACKENDS ?? "sqlite,postgres")
    .split(",")
    .map((name) => name.trim());
  const backends = names.filter((name) => name === "sqlite" || name === "postgres");
  if (backends.length === 0 || backends.length !== names.length) {
    console.error(`SVC_TEST_BACKENDS must list sqlite and/or postgres, not "${names.join(",")}"`);
    return 2;
  }
  const concurrency = Number(process.env.SVC_TEST_CONCURRENCY ?? 2 * availableParallelism());
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`SVC_TEST_CONCURRENCY must be a whole number of files, at least 1`);
    return 2;
  }
  const runId = randomBytes(4).toString("hex");
  const onCi = process.env.CI === "true";
  let skipped: string | null = null;
  if (!backends.includes("postgres")) {
    if (onCi) {
      banner(["SVC_TEST_BACKENDS leaves PostgreSQL out, but CI never skips it."]);
      return 1;
    }
    skipped = "SVC_TEST_BACKENDS leaves it out";
    banner([`PostgreSQL tests SKIPPED: ${skipped}`]);
  } else {
    const problem = await postgresProblem();
    if (problem !== null && onCi) {
      banner([`PostgreSQL tests FAILED TO START on CI: ${problem}`, "CI never skips them."]);
      return 1;
    }
    if (problem !== null) {
      skipped = problem;
      banner([
        `PostgreSQL tests SKIPPED: ${problem}`,
        "Point SVC_TEST_POSTGRES_URL at a PostgreSQL whose user may create databases,",
        "or set SVC_TEST_BACKENDS=sqlite to say that you mean to skip them.",
      ]);
    }
  }
  const running = backends.filter((backend) => backend === "sqlite" || skipped === null);
  console.log(`\n=== the test suite on ${running.map(label).join(" and ")} ===`);
  const runs = files.flatMap((file) => running.map((backend) => ({ file, backend })));
  const failed = await runAll(runs, runId, concurrency);
  if (running.includes("postgres")) await dropLeftovers(runId);
  if (skipped !== null) banner([`PostgreSQL tests SKIPPED: ${skipped}`]);
  return failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
