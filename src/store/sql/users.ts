import type {
  Membership,
  NewUser,
  Role,
  User,
  UserWithMemberships,
  UserWithPassword,
} from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";
import { toDate } from "./rows.ts";

interface UserRow extends Record<string, unknown> {
  id: string;
  email: string;
  password_hash: string;
  created_at: number | string;
}

function toUser(row: UserRow): UserWithPassword {
  return {
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    createdAt: toDate(row.created_at),
  };
}

/** The user without the password hash: what may leave the store for anything but a sign-in. */
function withoutPassword(user: UserWithPassword): User {
  return { id: user.id, email: user.email, createdAt: user.createdAt };
}

/** E-mail addresses are compared and stored lower-cased, so one address is one account. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The user and their first membership. Call inside a transaction. */
export async function insertUser(
  tx: SqlExecutor,
  user: NewUser,
  membership: { workspaceId: string; role: Role },
  now: number,
): Promise<User> {
  const rows = await tx.query<UserRow>(
    `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)
     RETURNING id, email, password_hash, created_at`,
    [user.id, normaliseEmail(user.email), user.passwordHash, now],
  );
  await tx.execute(
    `INSERT INTO memberships (user_id, workspace_id, role, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [user.id, membership.workspaceId, membership.role, now, now],
  );
  return withoutPassword(toUser(rows[0] as UserRow));
}

export async function selectUserByEmail(
  db: SqlExecutor,
  email: string,
): Promise<UserWithPassword | null> {
  const rows = await db.query<UserRow>(
    "SELECT id, email, password_hash, created_at FROM users WHERE email = $1",
    [normaliseEmail(email)],
  );
  return rows[0] === undefined ? null : toUser(rows[0]);
}

/** A user by id, or else by e-mail address (compared lower-cased). */
export async function selectUserByIdOrEmail(
  db: SqlExecutor,
  idOrEmail: string,
): Promise<User | null> {
  const rows = await db.query<UserRow>(
    `SELECT id, email, password_hash, created_at FROM users WHERE id = $1 OR email = $2
     ORDER BY CASE WHEN id = $1 THEN 0 ELSE 1 END`,
    [idOrEmail, normaliseEmail(idOrEmail)],
  );
  return rows[0] === undefined ? null : withoutPassword(toUser(rows[0]));
}

/** Every user with their memberships, oldest user first; one statement. */
export async function selectUsersWithMemberships(db: SqlExecutor): Promise<UserWithMemberships[]> {
  const rows = await db.query<
    UserRow & { workspace_id: string | null; workspace_name: string | null; role: Role | null }
  >(
    `SELECT u.id, u.email, u.password_hash, u.created_at,
            m.workspace_id, w.name AS workspace_name, m.role
     FROM users u
     LEFT JOIN memberships m ON m.user_id = u.id
     LEFT JOIN workspaces w ON w.id = m.workspace_id
     ORDER BY u.created_at, u.id, m.workspace_id`,
  );
  const users = new Map<string, UserWithMemberships & { memberships: Membership[] }>();
  for (const row of rows) {
    let user = users.get(row.id);
    if (user === undefined) {
      user = { ...withoutPassword(toUser(row)), memberships: [] };
      users.set(row.id, user);
    }
    if (row.workspace_id !== null && row.role !== null) {
      user.memberships.push({
        workspaceId: row.workspace_id,
        workspaceName: row.workspace_name ?? "",
        role: row.role,
      });
    }
  }
  return [...users.values()];
}

/**
 * Deletes the user with their sessions and memberships; returns how many memberships went, or
 * null when there was no such user. Call inside a transaction.
 */
export async function deleteUser(tx: SqlExecutor, userId: string): Promise<number | null> {
  await tx.execute("DELETE FROM sessions WHERE user_id = $1", [userId]);
  const memberships = await tx.execute("DELETE FROM memberships WHERE user_id = $1", [userId]);
  const users = await tx.execute("DELETE FROM users WHERE id = $1", [userId]);
  return users === 0 ? null : memberships;
}

/** Returns false when there is no such user. */
export async function updatePasswordHash(
  db: SqlExecutor,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  const changed = await db.execute("UPDATE users SET password_hash = $2 WHERE id = $1", [
    userId,
    passwordHash,
  ]);
  return changed > 0;
}

/**
 * Adds a membership or changes its role, in one transaction; returns the previous role. The
 * insert comes first so that two operators adding the same membership cannot both insert it.
 */
export function upsertMembership(
  db: Database,
  userId: string,
  workspaceId: string,
  role: Role,
  now: number,
): Promise<Role | null> {
  return db.transaction(async (tx) => {
    const inserted = await tx.execute(
      `INSERT INTO memberships (user_id, workspace_id, role, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, workspace_id) DO NOTHING`,
      [userId, workspaceId, role, now, now],
    );
    if (inserted === 1) return null;
    const [row] = await tx.query<{ role: Role }>(
      `SELECT role FROM memberships WHERE user_id = $1 AND workspace_id = $2 ${db.rowLockClause}`,
      [userId, workspaceId],
    );
    const previous = row?.role ?? null;
    if (previous !== role) {
      await tx.execute(
        "UPDATE memberships SET role = $3, updated_at = $4 WHERE user_id = $1 AND workspace_id = $2",
        [userId, workspaceId, role, now],
      );
    }
    return previous;
  });
}

export async function selectMembershipRole(
  db: SqlExecutor,
  userId: string,
  workspaceId: string,
): Promise<Role | null> {
  const rows = await db.query<{ role: Role }>(
    "SELECT role FROM memberships WHERE user_id = $1 AND workspace_id = $2",
    [userId, workspaceId],
  );
  return rows[0]?.role ?? null;
}

export async function selectMemberships(db: SqlExecutor, userId: string): Promise<Membership[]> {
  const rows = await db.query<{ workspace_id: string; workspace_name: string; role: Role }>(
    `SELECT m.workspace_id, w.name AS workspace_name, m.role
     FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
     WHERE m.user_id = $1 ORDER BY m.workspace_id`,
    [userId],
  );
  return rows.map((row) => ({
    workspaceId: row.workspace_id,
    workspaceName: row.workspace_name,
    role: row.role,
  }));
}
