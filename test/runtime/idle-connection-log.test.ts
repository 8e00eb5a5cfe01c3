import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { startServer, type RunningServer } from "../../src/runtime/server.ts";
import { adminQuery, testBackend, testDatabaseLocation } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { tempDir } from "../support/temp.ts";

const idleLine = "an idle database connection broke; the pool replaces it";

describe(
  "an idle PostgreSQL connection that breaks",
  {
    skip: testBackend !== "postgres" && "PostgreSQL run only",
  },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    let server: RunningServer;
    let database: string;
    const lines: string[] = [];

    before(async () => {
      dir = await tempDir();
      const dataDir = join(dir.path, "data");
      const url = await testDatabaseLocation(dataDir);
      database = new URL(url).pathname.slice(1);
      const config = loadServerConfig({
        env: { SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: url },
        flags: { port: "0", role: "api" },
      });
      const logger = createLogger("warn", {
        write: (line: string) => {
          lines.push(line);
        },
      });
      server = await startServer(config, { logger, clock: { now: () => new Date() } });
    });
    after(async () => {
      await server.close();
      await dir.cleanup();
    });

    it("is logged as one small line with the error's code and message, not the whole client", async () => {
      // The migrations left connections idle in the pool: end them from outside.
      await adminQuery(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
      );
      const line = await eventually(
        () => Promise.resolve(lines.find((each) => each.includes(idleLine))),
        { what: "the idle connection's line" },
      );
      assert.ok(line.length < 1000, `a line of ${line.length} bytes: ${line}`);
      const logged = JSON.parse(line) as { err?: { code?: string; message?: string } };
      assert.equal(logged.err?.code, "57P01", "admin_shutdown, as pg_terminate_backend gives");
      assert.match(logged.err.message ?? "", /terminating connection due to administrator command/);
    });
  },
);
