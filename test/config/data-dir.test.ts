import assert from "node:assert/strict";
import { chmod, chown, lstat, mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { checkLocalFiles, openDataDir } from "../../src/config/data-dir.ts";
import { loadServerConfig } from "../../src/config/server-config.ts";
import { canGiveFilesAway, otherUid } from "../support/other-user.ts";
import { tempDir } from "../support/temp.ts";

const uid = process.geteuid?.();

describe("the data directory", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let count = 0;
  /** A new directory with exactly this mode, inside the test's own (0700) temporary one. */
  const directory = async (mode: number): Promise<string> => {
    const path = join(dir.path, `data-${(count += 1)}`);
    await mkdir(path);
    await chmod(path, mode);
    return path;
  };

  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.cleanup());

  it("is created with mode 0700 when missing, with its missing parents", async () => {
    const path = join(dir.path, "new", "svc");
    await openDataDir(path);
    assert.equal((await stat(path)).mode & 0o777, 0o700);
    assert.equal((await stat(join(dir.path, "new"))).mode & 0o777, 0o700);
  });

  it("may be readable by others (0755): the files in it guard themselves", async () => {
    await openDataDir(await directory(0o755));
  });

  it("is refused when others may write to it, with the chmod that fixes it", async () => {
    const path = await directory(0o757);
    await assert.rejects(openDataDir(path), {
      code: "insecure_data_dir",
      message: `The data directory ${path} is writable by others (mode 0757). Run: chmod 700 ${path}`,
    });
  });

  it("is refused when its group may write to it", async () => {
    const path = await directory(0o770);
    await assert.rejects(openDataDir(path), {
      code: "insecure_data_dir",
      message: `The data directory ${path} is writable by its group (mode 0770). Run: chmod 700 ${path}`,
    });
  });

  it("is refused when another user owns it, even with mode 0700", async (t) => {
    if (!canGiveFilesAway(t)) return;
    const path = await directory(0o700);
    await chown(path, otherUid, -1);
    await assert.rejects(openDataDir(path), {
      code: "insecure_data_dir",
      message: `The data directory ${path} is owned by uid ${otherUid}, not by this user (uid ${uid}): start svc as uid ${otherUid}, or run: chown -R ${uid} ${path}`,
    });
  });

  it("is refused when it is a symlink, even to a fit directory, naming the target", async () => {
    const target = await directory(0o700);
    const link = join(dir.path, "link");
    await symlink(target, link);
    await assert.rejects(openDataDir(link), {
      code: "insecure_data_dir",
      message: `The data directory ${link} is a symlink to ${target}, which svc does not follow: set SVC_DATA_DIR (or --data-dir) to ${target} itself.`,
    });
  });

  it("is refused when it is not a directory", async () => {
    const path = join(dir.path, "a-file");
    await writeFile(path, "");
    await assert.rejects(openDataDir(path), { code: "insecure_data_dir" });
  });
});

describe("the local files a process checks before opening them", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  const postgres = "postgres://127.0.0.1:1/never_connected";
  const configFor = (env: NodeJS.ProcessEnv) => loadServerConfig({ env, flags: {} });

  before(async () => {
    dir = await tempDir();
  });
  after(() => dir.cleanup());

  it("refuse a SQLite database file, or its -wal or -shm, that others may read", async () => {
    const dataDir = join(dir.path, "sqlite");
    await mkdir(dataDir, { mode: 0o700 });
    for (const name of ["svc.db", "svc.db-wal", "svc.db-shm"]) {
      const path = join(dataDir, name);
      await writeFile(path, "", { mode: 0o604 });
      await chmod(path, 0o604);
      await assert.rejects(
        checkLocalFiles(configFor({ SVC_DATA_DIR: dataDir }), { encryptionKey: false }),
        {
          code: "insecure_database_file",
          message: `The database file ${path} is readable by others (mode 0604). Run: chmod o-rwx ${path}`,
        },
      );
      await chmod(path, 0o600);
    }
  });

  it("let the database's group read it (a backup group, say)", async () => {
    const dataDir = join(dir.path, "grouped");
    await mkdir(dataDir, { mode: 0o750 });
    await writeFile(join(dataDir, "svc.db"), "");
    await chmod(join(dataDir, "svc.db"), 0o640);
    await checkLocalFiles(configFor({ SVC_DATA_DIR: dataDir }), { encryptionKey: false });
  });

  it("include the data directory on PostgreSQL when the server generates its key there", async () => {
    const dataDir = join(dir.path, "pg-key");
    await mkdir(dataDir);
    await chmod(dataDir, 0o777);
    const config = configFor({ SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: postgres });
    await assert.rejects(checkLocalFiles(config, { encryptionKey: true }), {
      code: "insecure_data_dir",
    });
  });

  it("leave the data directory alone when nothing is kept there", async () => {
    const dataDir = join(dir.path, "unused");
    const operator = configFor({ SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: postgres });
    await checkLocalFiles(operator, { encryptionKey: false });
    const server = configFor({
      SVC_DATA_DIR: dataDir,
      SVC_DATABASE_URL: postgres,
      SVC_ENCRYPTION_KEY: Buffer.alloc(32).toString("base64"),
    });
    await checkLocalFiles(server, { encryptionKey: true });
    await assert.rejects(lstat(dataDir), { code: "ENOENT" });
  });
});
