import type { NewSession, Session } from "../../interfaces.ts";
import type { SqlExecutor } from "../database.ts";
import { toDate } from "./rows.ts";

interface SessionRow extends Record<string, unknown> {
  id: string;
  created_at: number | string;
  expires_at: number | string;
  user_id: string;
  email: string;
  user_created_at: number | string;
}

const selectSession = `
  SELECT s.id, s.created_at, s.expires_at, u.id AS user_id, u.email, u.created_at AS user_created_at
  FROM sessions s JOIN users u ON u.id = s.user_id`;

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    user: { id: row.user_id, email: row.email, createdAt: toDate(row.user_created_at) },
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
  };
}

/** Call inside a transaction: the insert and the read of what it inserted. */
export async function insertSession(
  tx: SqlExecutor,
  session: NewSession,
  now: number,
): Promise<Session> {
  await tx.execute(
    `INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [session.id, session.userId, session.tokenHash, now, session.expiresAt.getTime()],
  );
  const rows = await tx.query<SessionRow>(`${selectSession} WHERE s.id = $1`, [session.id]);
  return toSession(rows[0] as SessionRow);
}

/** Unknown, revoked and expired sessions alike are null: each is simply not a credential. */
export async function selectActiveSessionByHash(
  db: SqlExecutor,
  tokenHash: string,
  now: number,
): Promise<Session | null> {
  const rows = await db.query<SessionRow>(
    `${selectSession} WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`,
    [tokenHash, now],
  );
  return rows[0] === undefined ? null : toSession(rows[0]);
}

/** Keeps the time of the first revocation when revoked again. */
export async function revokeSession(db: SqlExecutor, id: string, now: number): Promise<boolean> {
  const changed = await db.execute(
    "UPDATE sessions SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
    [id, now],
  );
  return changed > 0;
}

/** Revokes every session of the user still in use; returns how many. */
export async function revokeUserSessions(
  db: SqlExecutor,
  userId: string,
  now: number,
): Promise<number> {
  return db.execute(
    `UPDATE sessions SET revoked_at = $2
     WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2`,
    [userId, now],
  );
}

/** A session past its expiry or revoked is of no further use: nothing refers to it. */
export async function deleteEndedSessions(db: SqlExecutor, now: number): Promise<number> {
  return db.execute("DELETE FROM sessions WHERE expires_at <= $1 OR revoked_at <= $1", [now]);
}
