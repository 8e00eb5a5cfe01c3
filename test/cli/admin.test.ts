import assert from "node:assert/strict";
import { stat, readFile, writeFile, symlink, chmod, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runSvc } from "../support/svc.ts";
import { testBackend, testDatabaseEnv } from "../support/database.ts";
import { tempDir } from "../support/temp.ts";

interface InitData {
  workspace_id: string;
  key_id: string;
  key_file: string;
  scopes: string[];
}

describe("svc admin", () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await tempDir();
    const dataDir = join(dir.path, "data");
    env = { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) };
  });
  after(() => dir.cleanup());

  it("init creates a workspace and an owner key with every scope in a new 0600 file", async () => {
    const keyFile = join(dir.path, "owner.key");
    const run = await runSvc(["admin", "init", "--output", keyFile, "--json"], { env });
    assert.equal(run.code, 0, run.stderr);
    const { ok, data } = JSON.parse(run.stdout) as { ok: boolean; data: InitData };
    assert.equal(ok, true);
    assert.match(data.workspace_id, /^ws_/);
    assert.deepEqual(data.scopes, [
      "webhooks:read",
      "webhooks:write",
      "events:read",
      "events:write",
    ]);
    assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
    const key = (await readFile(keyFile, "utf8")).trim();
    assert.match(key, /^svc_[A-Za-z0-9_-]{43}$/);
    assert.ok(
      !run.stdout.includes(key) && !run.stderr.includes(key),
      "the key is only in the file",
    );
    // The SQLite file's directory is its owner's alone (PostgreSQL needs no data directory).
    if (testBackend === "sqlite") {
      assert.equal((await stat(join(dir.path, "data"))).mode & 0o777, 0o700);
      assert.equal((await stat(join(dir.path, "data", "svc.db"))).mode & 0o777, 0o600);
    }
  });

  it("a second init creates nothing, says so, exits non-zero and leaves no file behind", async () => {
    const keyFile = join(dir.path, "second.key");
    const run = await runSvc(["admin", "init", "--output", keyFile], { env });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /already initialised/);
    await assert.rejects(stat(keyFile), { code: "ENOENT" });
  });

  it("init prints the workspace id alone on stdout in human mode", async () => {
    const other = await tempDir();
    try {
      const dataDir = join(other.path, "data");
      const run = await runSvc(["admin", "init", "--output", join(other.path, "k")], {
        env: { SVC_DATA_DIR: dataDir, ...(await testDatabaseEnv(dataDir)) },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^ws_[0-9a-f]{24}\n$/);
    } finally {
      await other.cleanup();
    }
  });

  it("never overwrites an existing --output file, nor writes through a symlink", async () => {
    const existing = join(dir.path, "existing.key");
    await writeFile(existing, "keep me");
    const target = join(dir.path, "target");
    const link = join(dir.path, "link.key");
    await symlink(target, link);
    for (const output of [existing, link]) {
      const run = await runSvc(
        [
          "admin",
          "keys",
          "create",
          "--workspace",
          "ws_x",
          "--scopes",
          "webhooks:read",
          "--output",
          output,
        ],
        { env },
      );
      assert.notEqual(run.code, 0);
    }
    assert.equal(await readFile(existing, "utf8"), "keep me");
    await assert.rejects(stat(target), { code: "ENOENT" });
  });

  it("keys create refuses an unknown workspace and unknown scopes before writing anything", async () => {
    const output = join(dir.path, "never.key");
    const unknownWorkspace = await runSvc(
      [
        "admin",
        "keys",
        "create",
        "--workspace",
        "ws_nope",
        "--scopes",
        "webhooks:read",
        "--output",
        output,
      ],
      { env },
    );
    assert.equal(unknownWorkspace.code, 5);
    assert.match(unknownWorkspace.stderr, /No workspace ws_nope/);
    const badScope = await runSvc(
      [
        "admin",
        "keys",
        "create",
        "--workspace",
        "ws_nope",
        "--scopes",
        "webhooks:admin",
        "--output",
        output,
      ],
      { env },
    );
    assert.equal(badScope.code, 2);
    assert.match(badScope.stderr, /webhooks:admin/);
    await assert.rejects(stat(output), { code: "ENOENT" });
  });

  it("keys create fails cleanly when the directory is not writable", async () => {
    const locked = join(dir.path, "locked");
    await mkdir(locked);
    await chmod(locked, 0o500);
    try {
      const workspace = await runSvc(["admin", "workspaces", "create", "--name", "w", "--json"], {
        env,
      });
      const id = (JSON.parse(workspace.stdout) as { data: { id: string } }).data.id;
      const run = await runSvc(
        [
          "admin",
          "keys",
          "create",
          "--workspace",
          id,
          "--scopes",
          "webhooks:read",
          "--output",
          join(locked, "k"),
        ],
        { env },
      );
      // Root ignores directory permissions; the rule is then checked by the missing-directory case.
      if (process.getuid?.() !== 0) {
        assert.equal(run.code, 2);
        assert.match(run.stderr, /cannot be created/);
      }
      const missing = await runSvc(
        [
          "admin",
          "keys",
          "create",
          "--workspace",
          id,
          "--scopes",
          "webhooks:read",
          "--output",
          join(dir.path, "no", "such", "k"),
        ],
        { env },
      );
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /output_not_writable/);
    } finally {
      await chmod(locked, 0o700);
    }
  });

  it("refuses a data directory that others may write to, creates nothing, and exits 1", async () => {
    const other = await tempDir();
    try {
      const dataDir = join(other.path, "data");
      await mkdir(dataDir);
      await chmod(dataDir, 0o777);
      // SQLite whichever backend this run tests: only its database is in the data directory.
      const run = await runSvc(["admin", "workspaces", "create", "--name", "w"], {
        env: { SVC_DATA_DIR: dataDir },
      });
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        `error: The data directory ${dataDir} is writable by its group and others (mode 0777). Run: chmod 700 ${dataDir} (insecure_data_dir)\n`,
      );
      assert.deepEqual(await readdir(dataDir), []);
    } finally {
      await other.cleanup();
    }
  });

  it("keys revoke of an unknown key exits 5", async () => {
    const run = await runSvc(["admin", "keys", "revoke", "key_unknown"], { env });
    assert.equal(run.code, 5);
    assert.match(run.stderr, /No API key key_unknown/);
  });

  it("workspaces create prints the new id (data.id with --json)", async () => {
    const run = await runSvc(["admin", "workspaces", "create", "--name", "Acme", "--json"], {
      env,
    });
    assert.equal(run.code, 0, run.stderr);
    const { data } = JSON.parse(run.stdout) as { data: { id: string; name: string } };
    assert.match(data.id, /^ws_/);
    assert.equal(data.name, "Acme");
  });

  it("a usage error exits 2 and points at --help", async () => {
    const run = await runSvc(
      ["admin", "init", "--output", join(dir.path, "u.key"), "--no-such-flag"],
      { env },
    );
    assert.equal(run.code, 2);
    assert.match(run.stderr, /unknown option '--no-such-flag'/);
    assert.match(run.stderr, /--help/);
    const json = await runSvc(["admin", "init", "--json"], { env });
    assert.equal(json.code, 2);
    const envelope = JSON.parse(json.stdout) as { ok: boolean; error: { code: string } };
    assert.equal(envelope.ok, false);
    assert.equal(envelope.error.code, "usage_error");
  });

  it("leaves no stray files in the data directory", async () => {
    const files = await readdir(join(dir.path, "data")).catch((error: unknown) => {
      // On PostgreSQL no operator command needs the data directory, so none may exist.
      if (testBackend === "postgres" && (error as NodeJS.ErrnoException).code === "ENOENT") {
        return [];
      }
      throw error;
    });
    assert.deepEqual(
      files.filter((file) => !/^svc\.db(-wal|-shm)?$/.test(file)),
      [],
    );
  });
});
