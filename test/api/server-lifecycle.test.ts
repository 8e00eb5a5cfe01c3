import assert from "node:assert/strict";
import { chmod, mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { apiClient, type DestinationJson } from "../support/api.ts";
import { initialise, startTestServer, type TestServer, type Workspace } from "../support/server.ts";
import { testDatabaseEnv } from "../support/database.ts";
import { runSvc } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

describe("the server process", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let dataDir: string;
  let server: TestServer;
  let owner: Workspace;
  const secrets: string[] = [];
  /** The logs of the servers already stopped; the whole run's log is these and the current one. */
  const earlierLogs: string[] = [];
  // The most verbose level, so that the search for secrets covers everything the server can log.
  const env = { SVC_LOG_LEVEL: "trace" };
  const restart = async (crash: boolean): Promise<void> => {
    if (crash) await server.kill();
    else {
      assert.equal(await server.stop(), 0, "SIGTERM exits 0");
      // The log is written asynchronously; the lines of the last moments are flushed at exit.
      assert.match(server.log(), /"msg":"stopped"\}\s*$/, "the last line logged is not lost");
    }
    earlierLogs.push(server.log());
    server = await startTestServer({ dataDir, env });
  };

  before(async () => {
    dir = await tempDir();
    dataDir = join(dir.path, "data");
    server = await startTestServer({ dataDir, env });
    owner = await initialise(server);
  });
  after(async () => {
    await server.stop();
    await dir.cleanup();
  });

  it("answers /healthz", async () => {
    const response = await fetch(new URL("/healthz", server.url));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: "ok" });
  });

  it("answers an unknown path with route_not_found in the error shape", async () => {
    const response = await apiClient(server.url, owner.key).get<{ error: { code: string } }>(
      "/v2/nothing",
    );
    assert.equal(response.status, 404);
    assert.equal(response.body.error.code, "route_not_found");
  });

  it("reports a port already in use plainly and exits 1", async () => {
    const { createServer } = await import("node:net");
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const run = await runSvc(["server", "--port", String(port)], { env: server.env });
      assert.equal(run.code, 1);
      assert.match(
        run.stderr,
        new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}: the port is already in use`),
      );
      assert.match(run.stderr, /listen_failed/);
    } finally {
      blocker.close();
    }
  });

  it("refuses to start on a data directory that others may write to, and exits 1", async () => {
    const unsafe = join(dir.path, "unsafe");
    await mkdir(unsafe);
    await chmod(unsafe, 0o777);
    // On PostgreSQL too: the data directory holds the server's generated encryption key.
    const run = await runSvc(["server", "--port", "0"], {
      env: { SVC_DATA_DIR: unsafe, ...(await testDatabaseEnv(unsafe)) },
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /is writable by its group and others \(mode 0777\)\. Run: chmod 700 /);
    assert.match(run.stderr, /\(insecure_data_dir\)/);
  });

  it("generates the encryption key file with mode 0600 on first start", async () => {
    assert.equal((await stat(join(dataDir, "encryption.key"))).mode & 0o777, 0o600);
  });

  it("keeps every destination across a graceful restart, and exits 0 on SIGTERM", async () => {
    const api = apiClient(server.url, owner.key);
    const base = `/v1/workspaces/${owner.id}/webhooks`;
    const created: DestinationJson[] = [];
    for (let index = 0; index < 5; index += 1) {
      const response = await api.post<DestinationJson>(base, {
        url: `https://public.example.test/${index}`,
        events: ["job.completed"],
      });
      created.push(response.body);
      secrets.push(response.body.secret ?? "");
    }
    await restart(false);
    const listed = await apiClient(server.url, owner.key).get<{ data: DestinationJson[] }>(base);
    const withoutSecrets = created.map((item) => ({ ...item, secret: undefined })).reverse();
    for (const item of withoutSecrets) delete item.secret;
    assert.deepEqual(listed.body.data, withoutSecrets);
  });

  it("keeps every acknowledged destination when killed with SIGKILL mid-burst", async () => {
    const api = apiClient(server.url, owner.key);
    const base = `/v1/workspaces/${owner.id}/webhooks`;
    const acknowledged: string[] = [];
    const burst = Array.from(
      { length: 200 },
      (_, index) =>
        api
          .post<DestinationJson>(base, { url: `https://public.example.test/crash/${index}` })
          .then((response) => {
            if (response.status === 201) {
              acknowledged.push(response.body.id);
              secrets.push(response.body.secret ?? "");
            }
          })
          .catch(() => undefined), // requests cut off by the kill
    );
    while (acknowledged.length < 20) await new Promise((resolve) => setImmediate(resolve));
    const killed = restart(true);
    await Promise.all(burst);
    await killed;
    const restarted = apiClient(server.url, owner.key);
    for (const id of acknowledged) {
      const response = await restarted.get<DestinationJson>(`${base}/${id}`);
      assert.equal(response.status, 200, `${id} was acknowledged, so it must survive`);
      assert.deepEqual(response.body.events, ["*"], "a destination is never half-written");
    }
  });

  it("never writes a signing secret to its log", () => {
    assert.ok(secrets.length > 0);
    const log = [...earlierLogs, server.log()].join("\n");
    for (const secret of secrets) assert.ok(!log.includes(secret));
    assert.doesNotMatch(log, /whsec_/);
    assert.ok(!log.includes(owner.key), "nor an API key");
  });
});
