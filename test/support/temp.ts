import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A new temporary directory, removed by the returned `cleanup`. */
export async function tempDir(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "svc-test-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
