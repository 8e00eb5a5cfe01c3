/**
 * `npm run test:only`: the whole suite once per backend, SQLite then PostgreSQL (one suite,
 * parameterised by `SVC_TEST_BACKEND`; see test/support/database.ts).
 *
 * - `SVC_TEST_POSTGRES_URL` (default postgres://127.0.0.1:5432/test): the PostgreSQL whose
 *   user may create databases; each server fixture gets a database of its own there.
 * - `SVC_TEST_BACKENDS` (default `sqlite,postgres`): the backends to run.
 * - Arguments, if any, replace the test files (globs as `node --test` takes them).
 *
 * When that PostgreSQL cannot be used, its run is skipped with a banner that says why,
 * except on CI (`CI=true`), where that is a failure: CI must never skip it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { adminQuery, testPostgresUrl, type TestBackend } from "./support/database.ts";

const defaultFiles = ["dist/test/**/*.test.js"];

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

function runSuite(backend: TestBackend, files: readonly string[], runId: string): Promise<number> {
  console.log(`\n=== the test suite on ${backend === "sqlite" ? "SQLite" : "PostgreSQL"} ===\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--test", "--test-concurrency=2", "--test-timeout=120000", ...files],
      {
        stdio: "inherit",
        env: { ...process.env, SVC_TEST_BACKEND: backend, SVC_TEST_RUN_ID: runId },
      },
    );
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
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
  const files = process.argv.length > 2 ? process.argv.slice(2) : defaultFiles;
  const names = (process.env.SVC_TEST_BACKENDS ?? "sqlite,postgres")
    .split(",")
    .map((name) => name.trim());
  const backends = names.filter((name) => name === "sqlite" || name === "postgres");
  if (backends.length === 0 || backends.length !== names.length) {
    console.error(`SVC_TEST_BACKENDS must list sqlite and/or postgres, not "${names.join(",")}"`);
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
  let failed = false;
  for (const backend of backends) {
    if (backend === "postgres" && skipped !== null) continue;
    const code = await runSuite(backend, files, runId);
    if (code !== 0) failed = true;
    if (backend === "postgres") await dropLeftovers(runId);
  }
  if (skipped !== null) banner([`PostgreSQL tests SKIPPED: ${skipped}`]);
  return failed ? 1 : 0;
}

process.exitCode = await main();
