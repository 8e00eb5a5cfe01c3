import type { SignInFailures } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";

interface CountRow extends Record<string, unknown> {
  subject: string;
  window_started_at: number | string;
  failures: number | string;
}

/**
 * One atomic upsert per subject: a subject whose window has ended (it started at or before
 * `now - windowMs`) starts a new window with this attempt; otherwise the attempt adds to it.
 * The subjects are taken in a fixed order so that two transactions never wait on each other.
 */
export function countSignInAttempt(
  db: Database,
  subjects: readonly string[],
  options: { now: number; windowMs: number },
): Promise<SignInFailures[]> {
  const { now, windowMs } = options;
  return db.transaction(async (tx) => {
    const counts: SignInFailures[] = [];
    for (const subject of [...new Set(subjects)].sort()) {
      const rows = await tx.query<CountRow>(
        `INSERT INTO sign_in_failures (subject, window_started_at, failures) VALUES ($1, $2, 1)
         ON CONFLICT (subject) DO UPDATE SET
           failures = CASE WHEN sign_in_failures.window_started_at <= $3 THEN 1
                           ELSE sign_in_failures.failures + 1 END,
           window_started_at = CASE WHEN sign_in_failures.window_started_at <= $3 THEN $2
                                    ELSE sign_in_failures.window_started_at END
         RETURNING subject, window_started_at, failures`,
        [subject, now, now - windowMs],
      );
      const row = rows[0] as CountRow;
      counts.push({
        subject: row.subject,
        failures: Number(row.failures),
        windowEndsAt: new Date(Number(row.window_started_at) + windowMs),
      });
    }
    return counts;
  });
}

export function forgiveSignInAttempt(
  db: Database,
  account: string,
  address: string,
): Promise<void> {
  return db.transaction(async (tx) => {
    await tx.execute("DELETE FROM sign_in_failures WHERE subject = $1", [account]);
    await tx.execute(
      "UPDATE sign_in_failures SET failures = failures - 1 WHERE subject = $1 AND failures > 0",
      [address],
    );
  });
}

export async function deleteEndedSignInWindows(
  db: SqlExecutor,
  options: { now: number; windowMs: number },
): Promise<number> {
  return db.execute("DELETE FROM sign_in_failures WHERE window_started_at <= $1", [
    options.now - options.windowMs,
  ]);
}
