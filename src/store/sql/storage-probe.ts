import { AppError } from "../../errors.ts";
import type { Database } from "../database.ts";

/**
 * Less free space than this is still full: a write that failed (SQLite's rolled-back WAL
 * frames) leaves room for a small write that a publish would not find.
 */
const minFreeBytes = 1 << 20;

/**
 * Whether writes succeed again, asked by readiness only while they are failing for lack of
 * space (decision 22): where the engine can tell its free space, at least `minFreeBytes`;
 * then the cheapest write that touches the disk, the newest migration's row rewritten
 * unchanged. Throws `storage_full` while the disk is still full.
 */
export async function probeWrite(db: Database): Promise<void> {
  const free = await db.freeSpace();
  if (free !== null && free < minFreeBytes) {
    throw new AppError(
      "storage_full",
      `The server's storage is full (${free} bytes free). Try again later.`,
    );
  }
  await db.execute(
    `UPDATE schema_migrations SET applied_at = applied_at
     WHERE version = (SELECT MAX(version) FROM schema_migrations)`,
  );
}
