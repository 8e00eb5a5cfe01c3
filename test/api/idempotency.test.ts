import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadServerConfig, resolveTable } from "../../src/config/server-config.ts";
import type { Clock, Resolver } from "../../src/interfaces.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { systemResolver, tableResolver } from "../../src/net/resolver.ts";
import { startServer, type RunningServer } from "../../src/runtime/server.ts";
import type { DestinationJson, ErrorJson } from "../support/api.ts";
import { testResolve } from "../support/server.ts";
import { runSvc } from "../support/svc.ts";
import { queryTestDatabase, testDatabaseEnv } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

const day = 24 * 3_600_000;

/**
 * A real server over HTTP on a temporary SQLite file, run in this process so that the test
 * can move its clock and hold a request in flight (through the resolver seam).
 */
describe("Idempotency-Key", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let server: RunningServer;
  let offset = 0;
  const clock: Clock = { now: () => new Date(Date.now() + offset) };
  /** The next resolution of slow.example.test waits until the test opens the gate. */
  let openGate: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  let reachedGate: () => void = () => undefined;
  /** Resolves once the held request is inside the resolver, holding its key. */
  const holdNextSlowRequest = (): Promise<void> => {
    gate = new Promise((resolve) => (openGate = resolve));
    return new Promise((resolve) => (reachedGate = resolve));
  };
  let workspaces: { id: string; key: string }[] = [];
  let flakyLookups = 0;

  const call = async (
    method: string,
    path: string,
    options: { key?: string; body?: string; workspace?: number } = {},
  ) => {
    const workspace = workspaces[options.workspace ?? 0]!;
    const headers: Record<string, string> = { authorization: `Bearer ${workspace.key}` };
    if (options.key !== undefined) headers["idempotency-key"] = options.key;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${server.url}/v1/workspaces/${workspace.id}${path}`, {
      method,
      headers,
      body: options.body,
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: JSON.parse(text) as unknown,
    };
  };
  const create = (key: string, body = '{"url":"https://public.example.test/a"}', workspace = 0) =>
    call("POST", "/webhooks", { key, body, workspace });
  const count = async (workspace = 0): Promise<number> =>
    ((await call("GET", "/webhooks?limit=100", { workspace })).json as { data: unknown[] }).data
      .length;

  before(async () => {
    dir = await tempDir();
    const dataDir = join(dir.path, "data");
    const env = {
      SVC_DATA_DIR: dataDir,
      ...(await testDatabaseEnv(dataDir)),
      SVC_RESOLVE: testResolve,
    };
    for (const name of ["a", "b"]) {
      const keyFile = join(dir.path, `${name}.key`);
      const init =
        name === "a"
          ? await runSvc(["admin", "init", "--output", keyFile, "--json"], { env })
          : undefined;
      let id: string;
      if (init) {
        id = (JSON.parse(init.stdout) as { data: { workspace_id: string } }).data.workspace_id;
      } else {
        const created = await runSvc(["admin", "workspaces", "create", "--name", name, "--json"], {
          env,
        });
        id = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
        await runSvc(
          [
            "admin",
            "keys",
            "create",
            "--workspace",
            id,
            "--scopes",
            "webhooks:write",
            "--output",
            keyFile,
          ],
          { env },
        );
      }
      workspaces.push({ id, key: (await readFile(keyFile, "utf8")).trim() });
    }
    const secondKeyFile = join(dir.path, "a-second.key");
    await runSvc(
      [
        "admin",
        "keys",
        "create",
        "--workspace",
        workspaces[0]!.id,
        "--scopes",
        "webhooks:write",
        "--output",
        secondKeyFile,
      ],
      { env },
    );
    workspaces.push({ id: workspaces[0]!.id, key: (await readFile(secondKeyFile, "utf8")).trim() });
    const config = loadServerConfig({ env, flags: { port: "0" } });
    const table = tableResolver(resolveTable(config), systemResolver);
    const gated: Resolver = {
      async resolve(hostname) {
        if (hostname === "flaky.example.test") {
          flakyLookups += 1;
          if (flakyLookups === 1) throw new Error("temporary DNS failure");
          return ["93.184.215.14"];
        }
        if (hostname === "slow.example.test") {
          const held = gate;
          gate = null;
          reachedGate();
          await held;
          return ["93.184.215.14"];
        }
        return table.resolve(hostname);
      },
    };
    server = await startServer(config, { logger: createLogger("silent"), clock, resolver: gated });
  });
  after(async () => {
    openGate();
    await server.close();
    await dir.cleanup();
    workspaces = [];
  });

  it("replays the identical response of a repeated create without creating anything", async () => {
    const before = await count();
    const first = await create("replay-1");
    assert.equal(first.status, 201);
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const again = await create("replay-1");
    assert.equal(again.status, 201);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.text, first.text, "same destination id and same secret");
    assert.equal(await count(), before + 1);
  });

  it("stores the replayable response sealed, never the secret in clear", async () => {
    const rows = await queryTestDatabase(
      join(dir.path, "data"),
      "SELECT response_body FROM idempotency_keys",
    );
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.doesNotMatch(String(row.response_body), /whsec_|dst_/);
    }
  });

  it("refuses a different body, path, query, or a whitespace-only change with idempotency_error", async () => {
    const original = '{"url":"https://public.example.test/b"}';
    assert.equal((await create("mismatch-1", original)).status, 201);
    const variants = [
      create("mismatch-1", '{"url":"https://public.example.test/c"}'),
      create("mismatch-1", '{ "url":"https://public.example.test/b"}'),
      call("POST", "/webhooks?source=retry", { key: "mismatch-1", body: original }),
      call("POST", "/events", {
        key: "mismatch-1",
        body: '{"type":"job.failed","data":{"object":{}}}',
      }),
    ];
    for (const response of await Promise.all(variants)) {
      assert.equal(response.status, 409, response.text);
      assert.equal((response.json as ErrorJson).error.code, "idempotency_error");
    }
  });

  it("answers a concurrent request with the same key idempotency_in_progress and Retry-After: 2", async () => {
    const held = holdNextSlowRequest();
    const before = await count();
    const body = '{"url":"https://slow.example.test/hook"}';
    const first = create("concurrent-1", body);
    await held; // the first request is in its URL check, holding the key
    const second = await create("concurrent-1", body);
    assert.equal(second.status, 409);
    assert.equal((second.json as ErrorJson).error.code, "idempotency_in_progress");
    assert.equal(second.headers.get("retry-after"), "2");
    openGate();
    assert.equal((await first).status, 201);
    assert.equal(await count(), before + 1, "exactly one destination");
    const third = await create("concurrent-1", body);
    assert.equal(third.headers.get("idempotent-replayed"), "true");
  });

  it("lets the same request run again once the lock of a request that died has expired", async () => {
    const held = holdNextSlowRequest();
    const body = '{"url":"https://slow.example.test/lock"}';
    const stuck = create("lock-1", body);
    await held;
    offset += 61_000; // past the 60 s lock: as if the first request had died
    const retried = await create("lock-1", body);
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get("idempotent-replayed"), null, "it ran, it was not replayed");
    openGate();
    await stuck;
  });

  it("rejects a key of 256 characters or of spaces only, and accepts 255 after trimming", async () => {
    for (const key of ["k".repeat(256), "   "]) {
      const response = await create(key);
      assert.equal(response.status, 400);
      assert.equal((response.json as ErrorJson).error.code, "invalid_idempotency_key");
    }
    const padded = `  ${"k".repeat(255)}  `;
    assert.equal((await create(padded)).status, 201);
    const trimmedSame = await create("k".repeat(255));
    assert.equal(trimmedSame.headers.get("idempotent-replayed"), "true", "the key is trimmed");
  });

  it("replays validation errors too, and the outcome of a delete", async () => {
    const invalid = '{"url":"http://public.example.test/"}';
    const first = await create("invalid-1", invalid);
    assert.equal(first.status, 400);
    const again = await create("invalid-1", invalid);
    assert.equal(again.status, 400);
    assert.equal(again.headers.get("idempotent-replayed"), "true");

    const created = (await create("to-delete")).json as DestinationJson;
    const deleted = await call("DELETE", `/webhooks/${created.id}`, { key: "delete-1" });
    assert.equal(deleted.status, 200);
    const repeated = await call("DELETE", `/webhooks/${created.id}`, { key: "delete-1" });
    assert.equal(repeated.status, 200, "not 404: the first outcome is replayed");
    assert.equal(repeated.text, deleted.text);
  });

  it("keeps keys of two workspaces apart", async () => {
    const a = await create("shared-key", '{"url":"https://public.example.test/ws-a"}', 0);
    const b = await create("shared-key", '{"url":"https://public.example.test/ws-b"}', 1);
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.notEqual((a.json as DestinationJson).id, (b.json as DestinationJson).id);
  });

  it("refuses the key to another credential of the same workspace", async () => {
    const body = '{"url":"https://public.example.test/owner-only"}';
    const first = await create("credential-1", body, 0);
    assert.equal(first.status, 201);
    const other = await create("credential-1", body, 2);
    assert.equal(other.status, 409);
    assert.equal((other.json as ErrorJson).error.code, "idempotency_error");
    assert.doesNotMatch(other.text, /whsec_/, "the secret is not handed to another credential");
  });

  it("does not replay a host name that failed to resolve: the retry runs again", async () => {
    const body = '{"url":"https://flaky.example.test/hook"}';
    const first = await create("flaky-1", body);
    assert.equal(first.status, 400);
    assert.equal((first.json as ErrorJson).error.code, "url_unresolvable");
    const retried = await create("flaky-1", body);
    assert.equal(retried.status, 201, retried.text);
  });

  it("takes an empty body with a JSON content type as no body", async () => {
    const created = (await create("empty-body-create")).json as DestinationJson;
    const deleted = await call("DELETE", `/webhooks/${created.id}`, {
      key: "empty-body",
      body: "",
    });
    assert.equal(deleted.status, 200, deleted.text);
  });

  it("forgets a key after 24 hours: it is usable again for a new request", async () => {
    assert.equal(
      (await create("expiring-1", '{"url":"https://public.example.test/d"}')).status,
      201,
    );
    offset += day + 1000;
    const later = await create("expiring-1", '{"url":"https://public.example.test/e"}');
    assert.equal(later.status, 201, later.text);
    assert.equal(later.headers.get("idempotent-replayed"), null);
  });
});
