import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { encryptionKeyCheckValue } from "../../src/crypto/key-check.ts";
import { apiClient } from "../support/api.ts";
import { assertExit } from "../support/cli.ts";
import { queryTestDatabase, testDatabaseLocation } from "../support/database.ts";
import { initialise, startTestServer, testResolve } from "../support/server.ts";
import { runSvc, type SvcRun } from "../support/svc.ts";
import { tempDir } from "../support/temp.ts";

const newKey = (): string => randomBytes(32).toString("base64");

/** The environment of a server on `dataDir` whose database is `database`. */
function serverEnv(dataDir: string, database: string, env: NodeJS.ProcessEnv = {}) {
  return { SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: database, SVC_RESOLVE: testResolve, ...env };
}

/** A start that must be refused: `svc server` exits by itself, so it is run to completion. */
function refusedStart(env: NodeJS.ProcessEnv, role = "all"): Promise<SvcRun> {
  return runSvc(["server", "--port", "0", "--role", role], { env });
}

function assertKeyMismatch(run: SvcRun, source: RegExp): void {
  assertExit(run, 1);
  const lines = run.stderr.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0] ?? "", source);
  const line = lines[0] ?? "";
  assert.match(
    line,
    /is not the one the database's signing secrets are sealed with; nothing was started\. Give every process the same key: .* \(encryption_key_mismatch\)$/,
  );
  // What to do, whichever way this process got its key: set the variable, or copy the file.
  assert.match(line, /same key: .*SVC_ENCRYPTION_KEY/);
  assert.match(line, /same key: .*encryption\.key .*first host/);
}

describe("the encryption key's check value: a process with another key refuses to start", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let database: string;
  const firstDataDir = (): string => join(dir.path, "first");

  before(async () => {
    dir = await tempDir();
    database = await testDatabaseLocation(firstDataDir());
    // The first process: it records its key's check value, and seals a destination's secret.
    const first = await startTestServer({ dataDir: firstDataDir() });
    const owner = await initialise(first);
    const created = await apiClient(first.url, owner.key).post(
      `/v1/workspaces/${owner.id}/webhooks`,
      { url: "https://public.example.test/hooks", events: ["job.completed"] },
    );
    assert.equal(created.status, 201, created.text);
    await first.stop();
  });
  after(() => dir.cleanup());

  it("records a check value of the key, never the key, when the first process starts", async () => {
    const key = Buffer.from(
      await readFile(join(firstDataDir(), "encryption.key"), "utf8"),
      "base64",
    );
    const rows = await queryTestDatabase<{ value: string }>(
      firstDataDir(),
      "SELECT value FROM settings WHERE name = 'encryption_key_check'",
    );
    assert.deepEqual(
      rows.map((row) => row.value),
      [encryptionKeyCheckValue(key)],
    );
    assert.doesNotMatch(rows[0]?.value ?? "", new RegExp(key.toString("hex")));
  });

  it("a worker on a second data directory, without the key, is refused and leaves nothing behind", async () => {
    const secondDataDir = join(dir.path, "second");
    const run = await refusedStart(serverEnv(secondDataDir, database), "worker");
    assertExit(run, 1);
    const lines = run.stderr.split("\n").filter((line) => line !== "");
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0] ?? "",
      new RegExp(
        `sealed with an encryption key, and this process has none: SVC_ENCRYPTION_KEY is not set and ${join(secondDataDir, "encryption.key")} does not exist\\. Nothing was started, and no key was generated\\..*\\(encryption_key_mismatch\\)$`,
      ),
    );
    // Before, it generated a key there, useless, that hid which key was missing.
    await assert.rejects(stat(secondDataDir), { code: "ENOENT" }, "the directory it made is gone");
  });

  it("a worker refused for its key leaves a data directory that was there as it was", async () => {
    const thirdDataDir = join(dir.path, "existing");
    await mkdir(thirdDataDir, { mode: 0o700 });
    const run = await refusedStart(serverEnv(thirdDataDir, database), "worker");
    assertExit(run, 1);
    assert.deepEqual(await readdir(thirdDataDir), [], "no encryption.key generated");
  });

  it("an API process given another key in SVC_ENCRYPTION_KEY is refused", async () => {
    const env = serverEnv(join(dir.path, "third"), database, { SVC_ENCRYPTION_KEY: newKey() });
    assertKeyMismatch(await refusedStart(env, "api"), /from SVC_ENCRYPTION_KEY\)/);
  });

  it("the same process restarted with another key file in its data directory is refused; with its own key it starts", async () => {
    const keyFile = join(firstDataDir(), "encryption.key");
    const own = await readFile(keyFile, "utf8");
    await writeFile(keyFile, `${newKey()}\n`, { mode: 0o600 });
    try {
      assertKeyMismatch(
        await refusedStart(serverEnv(firstDataDir(), database)),
        /encryption\.key\)/,
      );
    } finally {
      await writeFile(keyFile, own, { mode: 0o600 });
    }
    const again = await startTestServer({ dataDir: firstDataDir() });
    assert.equal(await again.stop(), 0);
  });

  it("a second data directory given the first one's key starts, as a worker", async () => {
    const key = (await readFile(join(firstDataDir(), "encryption.key"), "utf8")).trim();
    const worker = await startTestServer({
      dataDir: join(dir.path, "shared-key"),
      role: "worker",
      env: { SVC_DATABASE_URL: database, SVC_ENCRYPTION_KEY: key },
    });
    assert.equal(await worker.stop(), 0);
  });

  it("a database made before check values is checked against a sealed secret before the first record", async () => {
    await queryTestDatabase(firstDataDir(), "DELETE FROM settings");
    const env = serverEnv(join(dir.path, "upgrade"), database, { SVC_ENCRYPTION_KEY: newKey() });
    assertKeyMismatch(await refusedStart(env, "worker"), /from SVC_ENCRYPTION_KEY\)/);
    const rows = await queryTestDatabase(firstDataDir(), "SELECT name FROM settings");
    assert.deepEqual(rows, [], "nothing was recorded by the refused process");
  });
});
