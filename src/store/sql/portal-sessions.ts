import type { NewPortalLink, PortalRole, PortalSession } from "../../interfaces.ts";
import type { SqlExecutor } from "../database.ts";
import { toDate } from "./rows.ts";

/**
 * The customer portal's links and sessions (decision 43): one row each, a link until it is
 * redeemed, the session it became after. Every statement that decides whether a token still
 * works compares with `now` inside its own WHERE, so the decision and the change are one step.
 */

interface PortalSessionRow extends Record<string, unknown> {
  id: string;
  workspace_id: string;
  role: string;
  session_expires_at: number | string;
}

function toPortalSession(row: PortalSessionRow): PortalSession {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    role: row.role as PortalRole,
    expiresAt: toDate(row.session_expires_at),
  };
}

export async function insertPortalLink(
  db: SqlExecutor,
  link: NewPortalLink,
  now: number,
): Promise<void> {
  await db.execute(
    `INSERT INTO portal_sessions (id, workspace_id, role, link_token_hash, link_expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [link.id, link.workspaceId, link.role, link.tokenHash, link.expiresAt.getTime(), now],
  );
}

/**
 * Redeems a link: one UPDATE that takes it only while it is unused, unrevoked and unexpired.
 * Two redemptions at once cannot both match: SQLite runs one write at a time, and PostgreSQL's
 * second UPDATE waits for the first's row lock, then re-checks `redeemed_at IS NULL` on the
 * row as committed (READ COMMITTED), finds it set, and changes nothing.
 */
export async function redeemPortalLink(
  db: SqlExecutor,
  redemption: { linkTokenHash: string; sessionTokenHash: string; sessionExpiresAt: number },
  now: number,
): Promise<PortalSession | null> {
  const rows = await db.query<PortalSessionRow>(
    `UPDATE portal_sessions
     SET redeemed_at = $4, session_token_hash = $2, session_expires_at = $3
     WHERE link_token_hash = $1 AND redeemed_at IS NULL AND revoked_at IS NULL
       AND link_expires_at > $4
     RETURNING id, workspace_id, role, session_expires_at`,
    [redemption.linkTokenHash, redemption.sessionTokenHash, redemption.sessionExpiresAt, now],
  );
  return rows[0] === undefined ? null : toPortalSession(rows[0]);
}

/** Unknown, revoked and expired sessions alike are null: each is simply not a credential. */
export async function selectActivePortalSession(
  db: SqlExecutor,
  tokenHash: string,
  now: number,
): Promise<PortalSession | null> {
  const rows = await db.query<PortalSessionRow>(
    `SELECT id, workspace_id, role, session_expires_at FROM portal_sessions
     WHERE session_token_hash = $1 AND revoked_at IS NULL AND session_expires_at > $2`,
    [tokenHash, now],
  );
  return rows[0] === undefined ? null : toPortalSession(rows[0]);
}

/** Ends one session; false when it was not running. */
export async function revokePortalSession(
  db: SqlExecutor,
  id: string,
  now: number,
): Promise<boolean> {
  const changed = await db.execute(
    `UPDATE portal_sessions SET revoked_at = $2
     WHERE id = $1 AND revoked_at IS NULL AND session_expires_at > $2`,
    [id, now],
  );
  return changed > 0;
}

/**
 * Ends every way into the workspace's portal still open: its running sessions and its links
 * not yet opened. Returns how many of each.
 */
export async function revokeWorkspacePortalAccess(
  db: SqlExecutor,
  workspaceId: string,
  now: number,
): Promise<{ sessions: number; links: number }> {
  const sessions = await db.execute(
    `UPDATE portal_sessions SET revoked_at = $2
     WHERE workspace_id = $1 AND revoked_at IS NULL
       AND redeemed_at IS NOT NULL AND session_expires_at > $2`,
    [workspaceId, now],
  );
  const links = await db.execute(
    `UPDATE portal_sessions SET revoked_at = $2
     WHERE workspace_id = $1 AND revoked_at IS NULL
       AND redeemed_at IS NULL AND link_expires_at > $2`,
    [workspaceId, now],
  );
  return { sessions, links };
}

/**
 * Rows of no further use: revoked, a link that expired unopened, a session that has ended.
 * Nothing refers to them.
 */
export async function deleteEndedPortalSessions(db: SqlExecutor, now: number): Promise<number> {
  return db.execute(
    `DELETE FROM portal_sessions
     WHERE revoked_at <= $1
        OR (redeemed_at IS NULL AND link_expires_at <= $1)
        OR session_expires_at <= $1`,
    [now],
  );
}
