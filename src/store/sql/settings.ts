import type { SqlExecutor } from "../database.ts";

/** The names of the rows of `settings`. */
export const ENCRYPTION_KEY_CHECK = "encryption_key_check";
/** The latest cutoff of attempt retention's pass, in ms (decision 53). */
export const ATTEMPTS_PRUNED_BEFORE = "attempts_pruned_before";

export async function readSetting(db: SqlExecutor, name: string): Promise<string | null> {
  const [row] = await db.query<{ value: string }>("SELECT value FROM settings WHERE name = $1", [
    name,
  ]);
  return row?.value ?? null;
}

/** Records `value` unless the setting has one; the first writer wins. */
export async function insertSettingIfAbsent(
  db: SqlExecutor,
  name: string,
  value: string,
  now: number,
): Promise<void> {
  await db.execute(
    "INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    [name, value, now],
  );
}

export async function writeSetting(
  db: SqlExecutor,
  name: string,
  value: string,
  now: number,
): Promise<void> {
  await db.execute(
    "INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
    [name, value, now],
  );
}

/**
 * Records the number `value` unless the setting holds a larger one already: a mark that only
 * moves forward, whichever of several processes writes last.
 */
export async function raiseSetting(
  db: SqlExecutor,
  name: string,
  value: number,
  now: number,
): Promise<void> {
  await db.execute(
    `INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
     WHERE CAST(settings.value AS BIGINT) < CAST(excluded.value AS BIGINT)`,
    [name, String(value), now],
  );
}
