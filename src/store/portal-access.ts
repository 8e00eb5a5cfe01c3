import type { NewPortalLink, PortalSession } from "../interfaces.ts";
import {
  insertPortalLink,
  redeemPortalLink,
  revokePortalSession,
  revokeWorkspacePortalAccess,
  selectActivePortalSession,
} from "./sql/portal-sessions.ts";
import { SqlSlice } from "./sql-slice.ts";

/** The customer portal's one-time links and the sessions they open (decision 43). */
export interface PortalAccess {
  createLink(link: NewPortalLink): Promise<void>;

  /**
   * Turns an unused, unrevoked, unexpired link into a session with the token of
   * `sessionTokenHash`, at once: of redemptions racing for one link exactly one gets the
   * session, the others null (as for an unknown, used, revoked or expired link).
   */
  redeemLink(redemption: {
    linkTokenHash: string;
    sessionTokenHash: string;
    sessionExpiresAt: Date;
  }): Promise<PortalSession | null>;

  /** A running session by the hash of its token: null when unknown, revoked or ended. */
  findActiveSession(tokenHash: string): Promise<PortalSession | null>;

  /** Ends one session; false when it was not running. */
  revokeSession(id: string): Promise<boolean>;

  /** Ends the workspace's running sessions and its unopened links; how many of each. */
  revokeWorkspace(workspaceId: string): Promise<{ sessions: number; links: number }>;
}

/** The PortalAccess over any `Database`: the SQL is in `./sql/portal-sessions.ts`. */
export class SqlPortalAccess extends SqlSlice implements PortalAccess {
  createLink(link: NewPortalLink): Promise<void> {
    return insertPortalLink(this.db, link, this.now());
  }

  redeemLink(redemption: {
    linkTokenHash: string;
    sessionTokenHash: string;
    sessionExpiresAt: Date;
  }): Promise<PortalSession | null> {
    return redeemPortalLink(
      this.db,
      { ...redemption, sessionExpiresAt: redemption.sessionExpiresAt.getTime() },
      this.now(),
    );
  }

  findActiveSession(tokenHash: string): Promise<PortalSession | null> {
    return selectActivePortalSession(this.db, tokenHash, this.now());
  }

  revokeSession(id: string): Promise<boolean> {
    return revokePortalSession(this.db, id, this.now());
  }

  revokeWorkspace(workspaceId: string): Promise<{ sessions: number; links: number }> {
    return this.db.transaction((tx) => revokeWorkspacePortalAccess(tx, workspaceId, this.now()));
  }
}
