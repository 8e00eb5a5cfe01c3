import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { encryptionKeyCheckValue } from "../../src/crypto/key-check.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import { destinationSecretContext } from "../../src/crypto/sealing-contexts.ts";
import { systemClock } from "../../src/interfaces.ts";
import { openStore } from "../../src/store/open-store.ts";
import { testBackend, testDatabaseLocation } from "../support/database.ts";
import { runCliInMemory, type CliRun } from "../support/in-memory-cli.ts";
import { tempDir } from "../support/temp.ts";

const onSqlite = {
  skip: testBackend !== "sqlite" ? "SQLite only: PostgreSQL has pg_restore" : false,
};

function assertStatus(run: CliRun, status: number): void {
  assert.equal(
    run.status,
    status,
    `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`,
  );
}

/**
 * Issue 33: a backup taken before a key rotation, restored after it, used to be restored
 * silently, and the server then refused to start with advice for another situation.
 */
describe("svc admin restore checks the backup's key against the key in use", onSqlite, () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let dataDir: string;
  let database: string;
  let keyFile: string;
  let backup: string;
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  const svc = (args: readonly string[]) => runCliInMemory(args, { env: { SVC_DATA_DIR: dataDir } });
  const putKey = (key: Buffer) =>
    writeFile(keyFile, `${key.toString("base64")}\n`, { mode: 0o600 });
  const recordedCheck = async (): Promise<string | null> => {
    const store = await openStore(database, systemClock);
    try {
      return await store.encryptionKeys.recordedKeyCheck();
    } finally {
      await store.close();
    }
  };

  before(async () => {
    dir = await tempDir();
    dataDir = join(dir.path, "data");
    database = await testDatabaseLocation(dataDir);
    keyFile = join(dataDir, "encryption.key");
    backup = join(dir.path, "before-rotation.db");
    // A database whose destination's secret is sealed with the old key, as a server leaves it.
    const store = await openStore(database, systemClock);
    try {
      await store.credentials.createWorkspace({ id: "ws_restore", name: "Restored" });
      await store.encryptionKeys.recordKeyCheck(encryptionKeyCheckValue(oldKey));
      await store.destinations.createDestination({
        id: "dst_restore",
        workspaceId: "ws_restore",
        url: "https://public.example.test/hooks",
        events: ["job.completed"],
        secretCiphertext: new SecretBox(oldKey).encrypt(
          "whsec_restore",
          destinationSecretContext("dst_restore"),
        ),
      });
    } finally {
      await store.close();
    }
    await putKey(oldKey);
    assertStatus(await svc(["admin", "backup", "--output", backup]), 0);
    // The rotation: every secret re-sealed with the new key, which replaces encryption.key.
    const newKeyFile = join(dir.path, "new.key");
    await writeFile(newKeyFile, `${newKey.toString("base64")}\n`, { mode: 0o600 });
    assertStatus(await svc(["admin", "encryption-key", "rotate", "--new-key-file", newKeyFile]), 0);
    await putKey(newKey);
  });
  after(() => dir.cleanup());

  it("refuses a backup taken before a rotation, says which key it needs, and changes nothing", async () => {
    const run = await svc(["admin", "restore", "--input", backup, "--yes"]);
    assertStatus(run, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `sealed with another encryption key \\(its key's check value begins ${encryptionKeyCheckValue(oldKey).slice(0, 19)}…\\) than the one in ${keyFile}`,
      ),
    );
    assert.match(
      run.stderr,
      /the key from before the rotation\), then restore again\. \(backup_key_mismatch\)\n$/,
    );
    assert.equal(
      await recordedCheck(),
      encryptionKeyCheckValue(newKey),
      "the database is the same",
    );
    assert.deepEqual(
      (await readdir(dataDir)).filter((name) => name.includes(".restoring-")),
      [],
      "no copy left behind",
    );
  });

  it("refuses it where there is no key at all, naming where the key goes", async () => {
    await rm(keyFile);
    try {
      const run = await svc(["admin", "restore", "--input", backup, "--yes"]);
      assertStatus(run, 1);
      assert.match(run.stderr, new RegExp(`there is none here: .*${keyFile} does not exist`));
      assert.match(run.stderr, /\(backup_key_mismatch\)\n$/);
    } finally {
      await putKey(newKey);
    }
  });

  it("restores it once the key it was made with is back in place", async () => {
    await putKey(oldKey);
    const run = await svc(["admin", "restore", "--input", backup, "--yes"]);
    assertStatus(run, 0);
    assert.equal(await recordedCheck(), encryptionKeyCheckValue(oldKey));
  });
});
