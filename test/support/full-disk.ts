import { execFile } from "node:child_process";
import { mkdtemp, open, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { connectionConfig } from "../../src/store/postgres/connection-config.ts";

const run = promisify(execFile);

/** A small file system of its own that a test can fill up and free again. */
export interface SmallDisk {
  readonly path: string;
  /** Takes every free byte with a filler file: writes then fail with ENOSPC. */
  fill(): Promise<void>;
  /** Removes the filler file. */
  free(): Promise<void>;
  /** Unmounts it and removes its mount point. */
  cleanup(): Promise<void>;
}

/**
 * A `tmpfs` of `sizeMiB` on a new directory, or the reason why one cannot be mounted here
 * (mounting needs root, or CAP_SYS_ADMIN in a container), for the test to skip with.
 */
export async function mountSmallDisk(sizeMiB: number): Promise<SmallDisk | string> {
  const path = await mkdtemp(join(tmpdir(), "svc-small-disk-"));
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0700`, "tmpfs", path]);
  } catch (error) {
    await rmdir(path);
    const detail = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
    return `a small file system cannot be mounted here (${detail})`;
  }
  const filler = join(path, "filler");
  return {
    path,
    async fill() {
      const file = await open(filler, "a");
      try {
        // Large blocks first, then single pages, until nothing more fits.
        for (const size of [1 << 20, 4096, 1]) {
          const block = Buffer.alloc(size, 1);
          for (;;) {
            try {
              await file.write(block);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw error;
            }
          }
        }
      } finally {
        await file.close();
      }
    },
    async free() {
      await rm(filler, { force: true });
    },
    async cleanup() {
      await run("umount", [path]);
      await rmdir(path);
    },
  };
}

/**
 * Makes every write to the tables of the PostgreSQL database at `url` fail, until `free`, with
 * the error PostgreSQL gives when it cannot extend a file on a full disk (SQLSTATE 53100,
 * disk_full): a statement trigger on each table raises it. The engine's own error, through
 * the real driver and adapter; only its cause is staged. Done on a connection of its own, so
 * that the service's adapter sees none of it succeed.
 */
export async function postgresDiskFull(url: string): Promise<{ free(): Promise<void> }> {
  const db = new pg.Client(connectionConfig(url));
  await db.connect();
  await db.query(`
    CREATE OR REPLACE FUNCTION svc_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'could not extend file "base/16384/16385": No space left on device'
        USING ERRCODE = 'disk_full', HINT = 'Check free disk space.';
    END $$`);
  const { rows: tables } = await db.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()",
  );
  const triggers = (verb: "CREATE" | "DROP"): string =>
    tables
      .map(({ name }) =>
        verb === "CREATE"
          ? `CREATE TRIGGER svc_test_disk_full BEFORE INSERT OR UPDATE OR DELETE ON ${name}
             FOR EACH STATEMENT EXECUTE FUNCTION svc_test_disk_full();`
          : `DROP TRIGGER svc_test_disk_full ON ${name};`,
      )
      .join("\n");
  await db.query(`DO $$ BEGIN ${triggers("CREATE")} END $$`);
  return {
    async free() {
      try {
        await db.query(`DO $$ BEGIN ${triggers("DROP")} END $$`);
      } finally {
        await db.end();
      }
    },
  };
}
