import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropTestDatabasesUnder } from "./database.ts";

/**
 * A new temporary directory, removed by the returned `cleanup`, together with the PostgreSQL
 * databases made for data directories inside it.
 */
export async function tempDir(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "svc-test-"));
  return {
    path,
    cleanup: async () => {
      await dropTestDatabasesUnder(path);
      await rm(path, { recursive: true, force: true });
    },
  };
}
