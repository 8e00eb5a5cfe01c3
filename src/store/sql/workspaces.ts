import type { NewApiKey, Page, Workspace } from "../../interfaces.ts";
import type { Database, SqlExecutor } from "../database.ts";
import { insertApiKey } from "./api-keys.ts";
import { decodeIdCursor, idPageOf } from "./cursor.ts";
import { operationsWorkspaceLiteral } from "./operational-events.ts";
import { toDate } from "./rows.ts";

interface WorkspaceRow extends Record<string, unknown> {
  id: string;
  name: string;
  external_id: string | null;
  metadata: string;
  created_at: number | string;
  updated_at: number | string | null;
}

/**
 * The operations workspace (decision 48) is the server's own: no lookup, list or change by
 * id finds it, so no route, credential or operator command reaches it.
 */
export const notOperations = `id <> ${operationsWorkspaceLiteral}`;

export const workspaceColumns = "id, name, external_id, metadata, created_at, updated_at";

export function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    externalId: row.external_id,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at ?? row.created_at),
  };
}

/** What a new workspace is given; `externalId` and `metadata` by the platform API only. */
export interface NewWorkspace {
  readonly id: string;
  readonly name: string;
  readonly externalId?: string | null;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Only the members present change; `metadata` is replaced whole. */
export interface WorkspaceChanges {
  readonly name?: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Fails on the unique index when another workspace has the `externalId`. */
export async function insertWorkspace(
  db: SqlExecutor,
  workspace: NewWorkspace,
  now: number,
): Promise<Workspace> {
  const rows = await db.query<WorkspaceRow>(
    `INSERT INTO workspaces (id, name, external_id, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${workspaceColumns}`,
    [
      workspace.id,
      workspace.name,
      workspace.externalId ?? null,
      JSON.stringify(workspace.metadata ?? {}),
      now,
    ],
  );
  return toWorkspace(rows[0] as WorkspaceRow);
}

export async function selectWorkspace(db: SqlExecutor, id: string): Promise<Workspace | null> {
  const rows = await db.query<WorkspaceRow>(
    `SELECT ${workspaceColumns} FROM workspaces WHERE id = $1 AND ${notOperations}`,
    [id],
  );
  return rows[0] === undefined ? null : toWorkspace(rows[0]);
}

/** Every workspace, oldest first. */
export async function selectWorkspaces(db: SqlExecutor): Promise<Workspace[]> {
  const rows = await db.query<WorkspaceRow>(
    `SELECT ${workspaceColumns} FROM workspaces WHERE ${notOperations} ORDER BY created_at, id`,
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

/**
 * Inserts the workspace unless another has its `externalId`: null then, nothing written. The
 * unique index decides, so two creates at once with one id cannot both succeed (PostgreSQL's
 * second waits for the first to commit, then does nothing).
 */
export async function insertWorkspaceUnlessTaken(
  db: SqlExecutor,
  workspace: NewWorkspace,
  now: number,
): Promise<Workspace | null> {
  const rows = await db.query<WorkspaceRow>(
    `INSERT INTO workspaces (id, name, external_id, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (external_id) WHERE external_id IS NOT NULL DO NOTHING
     RETURNING ${workspaceColumns}`,
    [
      workspace.id,
      workspace.name,
      workspace.externalId ?? null,
      JSON.stringify(workspace.metadata ?? {}),
      now,
    ],
  );
  return rows[0] === undefined ? null : toWorkspace(rows[0]);
}

/**
 * Newest first, by creation time then id (the index `workspaces_by_creation`); with
 * `externalId`, only the workspace that has it.
 */
export async function selectWorkspacePage(
  db: SqlExecutor,
  options: { limit: number; cursor: string | null; externalId: string | null },
): Promise<Page<Workspace>> {
  const before =
    options.cursor === null
      ? { createdAt: Number.MAX_SAFE_INTEGER, id: "" }
      : decodeIdCursor(options.cursor);
  // Two statements, not `($1 = '' OR external_id = $1)`: a planner that meets the OR walks
  // the list's index and filters (SQLite does, ~2 ms at 10,000 workspaces) where the unique
  // index finds the one row at once. One row more than asked tells whether a page follows.
  const filter = options.externalId === null ? "" : "external_id = $4 AND";
  const rows = await db.query<WorkspaceRow>(
    `SELECT ${workspaceColumns} FROM workspaces
     WHERE ${filter} ${notOperations} AND (created_at < $1 OR (created_at = $1 AND id < $2))
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [
      before.createdAt,
      before.id,
      options.limit + 1,
      ...(options.externalId === null ? [] : [options.externalId]),
    ],
  );
  return idPageOf(rows, options.limit, toWorkspace);
}

/** Changes only the members given; null when there is no such workspace. */
export async function updateWorkspace(
  db: SqlExecutor,
  id: string,
  changes: WorkspaceChanges,
  now: number,
): Promise<Workspace | null> {
  const rows = await db.query<WorkspaceRow>(
    `UPDATE workspaces SET name = COALESCE($2, name), metadata = COALESCE($3, metadata),
       updated_at = $4
     WHERE id = $1 AND ${notOperations} RETURNING ${workspaceColumns}`,
    [
      id,
      changes.name ?? null,
      changes.metadata === undefined ? null : JSON.stringify(changes.metadata),
      now,
    ],
  );
  return rows[0] === undefined ? null : toWorkspace(rows[0]);
}
