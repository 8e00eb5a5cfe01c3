import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, chown, mkdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import { ENCRYPTION_KEY_FILE, loadEncryptionKey } from "../../src/crypto/encryption-key.ts";
import { canGiveFilesAway, otherUid } from "../support/other-user.ts";
import { tempDir } from "../support/temp.ts";

describe("the encryption key file of the data directory", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let dataDir: string;
  let keyFile: string;
  const key = randomBytes(32);
  /** A valid key file at `path` with exactly this mode. */
  const writeKey = async (path: string, mode: number): Promise<void> => {
    await writeFile(path, `${key.toString("base64")}\n`);
    await chmod(path, mode);
  };

  before(async () => {
    dir = await tempDir();
    dataDir = join(dir.path, "data");
    await mkdir(dataDir, { mode: 0o700 });
    keyFile = join(dataDir, ENCRYPTION_KEY_FILE);
  });
  afterEach(() => rm(keyFile, { recursive: true, force: true }));
  after(() => dir.cleanup());

  it("is generated with mode 0600 when missing, and read back the next time", async () => {
    const generated = await loadEncryptionKey(undefined, dataDir);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    assert.deepEqual(await loadEncryptionKey(undefined, dataDir), generated);
  });

  it("may be read-only for its owner (0400)", async () => {
    await writeKey(keyFile, 0o400);
    assert.deepEqual(await loadEncryptionKey(undefined, dataDir), key);
  });

  it("is refused when it is a symlink, even to a key anyone may read", async () => {
    const elsewhere = join(dir.path, "someone-elses.key");
    await writeKey(elsewhere, 0o644);
    await symlink(elsewhere, keyFile);
    await assert.rejects(loadEncryptionKey(undefined, dataDir), {
      code: "insecure_key_file",
      message: `The encryption key file ${keyFile} is a symlink, which svc does not follow: put the key file itself there (mode 0600), or set SVC_ENCRYPTION_KEY.`,
    });
  });

  it("is refused when it is not a regular file", async () => {
    await mkdir(keyFile);
    await assert.rejects(loadEncryptionKey(undefined, dataDir), {
      code: "insecure_key_file",
      message: `The encryption key file ${keyFile} is not a regular file: put the key file there (mode 0600), or set SVC_ENCRYPTION_KEY.`,
    });
  });

  // Were the open to wait for a writer, it would wait for ever: fail fast instead.
  it(
    "is refused when it is a FIFO, without waiting for a writer to open it",
    { timeout: 5000 },
    async () => {
      execFileSync("mkfifo", ["-m", "600", keyFile]);
      await assert.rejects(loadEncryptionKey(undefined, dataDir), { code: "insecure_key_file" });
    },
  );

  it("is refused when another user owns it, even with mode 0600", async (t) => {
    if (!canGiveFilesAway(t)) return;
    await writeKey(keyFile, 0o600);
    await chown(keyFile, otherUid, -1);
    const uid = process.geteuid?.();
    await assert.rejects(loadEncryptionKey(undefined, dataDir), {
      code: "insecure_key_file",
      message: `The encryption key file ${keyFile} is owned by uid ${otherUid}, not by this user (uid ${uid}): start svc as uid ${otherUid}, or run: chown ${uid} ${keyFile}`,
    });
  });

  it("is refused when its group or others may read or write it, with the chmod that fixes it", async () => {
    const modes: [number, string][] = [
      [0o640, "readable by its group"],
      [0o620, "writable by its group"],
      [0o604, "readable by others"],
      [0o602, "writable by others"],
      [0o644, "readable by its group and others"],
      [0o660, "readable and writable by its group"],
    ];
    for (const [mode, access] of modes) {
      await writeKey(keyFile, mode);
      await assert.rejects(loadEncryptionKey(undefined, dataDir), {
        code: "insecure_key_file",
        message: `The encryption key file ${keyFile} is ${access} (mode 0${mode.toString(8)}). Run: chmod 600 ${keyFile}`,
      });
    }
  });

  it("is not looked at when a key is configured", async () => {
    await mkdir(keyFile); // would be refused
    const configured = randomBytes(32);
    assert.deepEqual(await loadEncryptionKey(configured.toString("base64"), dataDir), configured);
  });
});
