import { randomBytes } from "node:crypto";
import { join, sep } from "node:path";
import pg from "pg";
import type { Row, SqlValue } from "../../src/store/database.ts";
import { openDatabase } from "../../src/store/open-store.ts";
import { connectionConfig } from "../../src/store/postgres/connection-config.ts";

export { sqlitePassOnly, testBackend, type TestBackend } from "./backend.ts";
import { testBackend } from "./backend.ts";

/**
 * The PostgreSQL the tests create their databases on, through this URL's database (which
 * must exist; the user needs CREATEDB). `SVC_TEST_POSTGRES_URL` overrides the default.
 */
export const testPostgresUrl =
  process.env.SVC_TEST_POSTGRES_URL ?? "postgres://127.0.0.1:5432/test";

/**
 * Databases are named for the run (`SVC_TEST_RUN_ID`, set by the test runner), so that the
 * runner can drop whatever a crashed test file left behind.
 */
export const testDatabasePrefix = `svc_test_${process.env.SVC_TEST_RUN_ID ?? "manual"}_`;

/** The PostgreSQL database of each data directory of this test process, by data directory. */
const postgresDatabases = new Map<string, string>();

/** `base` with its database replaced by `name` (user, password, host and options kept). */
export function postgresUrlFor(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement on the administrative connection (`testPostgresUrl`). */
export async function adminQuery(sql: string): Promise<Row[]> {
  const client = new pg.Client(connectionConfig(testPostgresUrl));
  await client.connect();
  try {
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end();
  }
}

/**
 * The database a server on `dataDir` uses, made on first use: on SQLite the default file in
 * the data directory; on PostgreSQL a new database of its own, so that test files stay
 * isolated and can run at once. A restart on the same data directory finds the same one.
 */
export async function testDatabaseLocation(dataDir: string): Promise<string> {
  if (testBackend === "sqlite") return join(dataDir, "svc.db");
  let name = postgresDatabases.get(dataDir);
  if (name === undefined) {
    name = `${testDatabasePrefix}${randomBytes(6).toString("hex")}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    postgresDatabases.set(dataDir, name);
  }
  return postgresUrlFor(testPostgresUrl, name);
}

/**
 * What a `svc` process needs, beside `SVC_DATA_DIR`, to open the database of `dataDir`:
 * nothing on SQLite (it uses the data directory's file), `SVC_DATABASE_URL` on PostgreSQL.
 */
export async function testDatabaseEnv(dataDir: string): Promise<NodeJS.ProcessEnv> {
  return testBackend === "sqlite" ? {} : { SVC_DATABASE_URL: await testDatabaseLocation(dataDir) };
}

/**
 * Runs a query on the database of `dataDir`, through the project's own adapter for the
 * backend, so that tests can look at what the server stored whichever engine holds it.
 */
export async function queryTestDatabase<R extends Row = Row>(
  dataDir: string,
  sql: string,
  params: readonly SqlValue[] = [],
): Promise<R[]> {
  const db = openDatabase(await testDatabaseLocation(dataDir));
  try {
    return await db.query<R>(sql, params);
  } finally {
    await db.close();
  }
}

/** Drops the PostgreSQL databases of the data directories under `path` (temp dir cleanup). */
export async function dropTestDatabasesUnder(path: string): Promise<void> {
  for (const [dataDir, name] of postgresDatabases) {
    if (dataDir !== path && !dataDir.startsWith(path + sep)) continue;
    postgresDatabases.delete(dataDir);
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
