import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient } from "../support/api.ts";
import pg from "pg";
import { connectionConfig } from "../../src/store/postgres/connection-config.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { initialise, startTestServer, type TestServer } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

/**
 * Two API processes keep the keys they find (decision 63); a key revoked by a third process
 * (`svc admin keys revoke`, on the database directly) is refused by both, as soon as the
 * notice of migration 000022's trigger reaches them.
 */
describe(
  "an API key revoked while two API processes hold it",
  { skip: testBackend !== "postgres" && "PostgreSQL only: processes share one database" },
  () => {
    let dir: { path: string; cleanup: () => Promise<void> };
    const servers: TestServer[] = [];

    before(async () => {
      dir = await tempDir();
    });
    after(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await dir.cleanup();
    });

    it("is refused by both once revoked elsewhere", { timeout: 60_000 }, async () => {
      const dataDir = join(dir.path, "shared");
      const first = await startTestServer({ dataDir, role: "api" });
      servers.push(first);
      const second = await startTestServer({ dataDir, env: first.env, role: "api" });
      servers.push(second);
      const owner = await initialise(first);
      const keyFile = join(dir.path, "reader.key");
      const created = await runSvc(
        [
          "admin",
          "keys",
          "create",
          "--workspace",
          owner.id,
          "--scopes",
          "webhooks:read",
          "--output",
          keyFile,
          "--json",
        ],
        { env: first.env },
      );
      assert.equal(created.code, 0, created.stderr);
      const keyId = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
      const token = (await readFile(keyFile, "utf8")).trim();
      const path = `/v1/workspaces/${owner.id}/webhooks`;
      for (const server of servers) {
        // Twice: the second answer may come from what the first lookup kept.
        for (let i = 0; i < 2; i += 1) {
          const listed = await apiClient(server.url, token).get(path);
          assert.equal(listed.status, 200, listed.text);
        }
      }

      // Both listening for changes to keys (else they keep nothing, and the test shows less).
      const database = await testDatabaseLocation(dataDir);
      await eventually(
        async () => {
          const client = new pg.Client(connectionConfig(database));
          await client.connect();
          try {
            const { rows } = await client.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'svc listen svc_api_keys' AND datname = current_database()",
            );
            return rows[0]?.n === 2 ? true : undefined;
          } finally {
            await client.end();
          }
        },
        { what: "both processes listening" },
      );
      const revoked = await runSvc(["admin", "keys", "revoke", keyId], { env: first.env });
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const server of servers) {
        const refused = await eventually(
          async () => {
            const answer = await apiClient(server.url, token).get(path);
            return answer.status === 401 ? answer : undefined;
          },
          { what: "the revocation heard", timeoutMs: 5000 },
        );
        assert.equal((refused.body as { error: { code: string } }).error.code, "unauthenticated");
      }
    });
  },
);
