import type { NewApiKey, Workspace } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";
import { insertApiKey } from "./api-keys.ts";
import { toDate } from "./rows.ts";

interface WorkspaceRow extends Record<string, unknown> {
  id: string;
  name: string;
  created_at: number | string;
}

function toWorkspace(row: WorkspaceRow): Workspace {
  return { id: row.id, name: row.name, createdAt: toDate(row.created_at) };
}

export async function insertWorkspace(
  db: SqlExecutor,
  workspace: { id: string; name: string },
  now: number,
): Promise<Workspace> {
  const rows = await db.query<WorkspaceRow>(
    "INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) RETURNING id, name, created_at",
    [workspace.id, workspace.name, now],
  );
  return toWorkspace(rows[0] as WorkspaceRow);
}

export async function selectWorkspace(db: SqlExecutor, id: string): Promise<Workspace | null> {
  const rows = await db.query<WorkspaceRow>(
    "SELECT id, name, created_at FROM workspaces WHERE id = $1",
    [id],
  );
  return rows[0] === undefined ? null : toWorkspace(rows[0]);
}

/** Every workspace, oldest first. */
export async function selectWorkspaces(db: SqlExecutor): Promise<Workspace[]> {
  const rows = await db.query<WorkspaceRow>(
    "SELECT id, name, created_at FROM workspaces ORDER BY created_at, id",
  );
  return rows.map(toWorkspace);
}

/**
 * The one row of `instance` is the mark of an initialised database; its primary key makes a
 * second initialisation fail even when two run at once. Call inside a transaction.
 */
export async function initialiseInstance(
  tx: SqlExecutor,
  workspace: { id: string; name: string },
  key: NewApiKey,
  now: number,
): Promise<boolean> {
  const claimed = await tx.execute(
    "INSERT INTO instance (id, first_workspace_id, initialised_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING",
    [workspace.id, now],
  );
  if (claimed === 0) return false;
  await insertWorkspace(tx, workspace, now);
  await insertApiKey(tx, key, now);
  return true;
}

/**
 * Call inside a transaction. Holds the workspace's row until the transaction ends, so that
 * counting what the workspace has and adding one more run one at a time per workspace: two
 * creates at once cannot both count below a limit (decision 39). SQLite's write transactions
 * already run one at a time. `FOR NO KEY UPDATE`, not `FOR UPDATE`: a publish, whose rows
 * reference the workspace (a `FOR KEY SHARE`), does not wait for it.
 */
export async function lockWorkspace(
  db: Database,
  tx: SqlExecutor,
  workspaceId: string,
): Promise<void> {
  const lock = db.dialect === "postgres" ? "FOR NO KEY UPDATE" : "";
  await tx.query(`SELECT id FROM workspaces WHERE id = $1 ${lock}`, [workspaceId]);
}
