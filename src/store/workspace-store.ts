import type { ApiKey, Page, Workspace } from "../interfaces.ts";
import { revokeWorkspaceApiKey, selectWorkspaceApiKeyPage } from "./sql/api-keys.ts";
import {
  deleteWorkspaceAndContents,
  hasDestinations,
  lockWorkspaceForDeletion,
} from "./sql/workspace-deletion.ts";
import {
  insertWorkspaceUnlessTaken,
  selectWorkspace,
  selectWorkspacePage,
  updateWorkspace,
  type NewWorkspace,
  type WorkspaceChanges,
} from "./sql/workspaces.ts";
import type { ApiKeyCache } from "./api-key-cache.ts";
import type { Database } from "./database.ts";
import type { Clock } from "../interfaces.ts";
import { SqlSlice } from "./sql-slice.ts";

export type { NewWorkspace, WorkspaceChanges };

/** What became of deleting a workspace. */
export type WorkspaceDeletion = "deleted" | "not_found" | "not_empty";

/**
 * Workspaces as the platform API manages them (decision 42): their records, their API keys,
 * and their deletion with everything in them. Keys are made through `CredentialStore`.
 */
export interface WorkspaceStore {
  /** Null, nothing written, when another workspace has the `externalId`. */
  createWorkspace(workspace: NewWorkspace): Promise<Workspace | null>;

  getWorkspace(id: string): Promise<Workspace | null>;

  /** Newest first; with `externalId`, only the workspace that has it. */
  listWorkspaces(options: {
    limit: number;
    cursor: string | null;
    externalId: string | null;
  }): Promise<Page<Workspace>>;

  /** Null when there is no such workspace. */
  updateWorkspace(id: string, changes: WorkspaceChanges): Promise<Workspace | null>;

  /**
   * Deletes the workspace and everything in it, in one transaction; unless `cascade`, only
   * while it has no webhook destinations (`not_empty` otherwise, nothing deleted).
   */
  deleteWorkspace(id: string, options: { cascade: boolean }): Promise<WorkspaceDeletion>;

  /** The workspace's unrevoked keys, newest first. */
  listApiKeys(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<ApiKey>>;

  /** False when the workspace has no such key in use. */
  revokeApiKey(workspaceId: string, id: string): Promise<boolean>;
}

/** The WorkspaceStore over any `Database`: the SQL is in `./sql/`. */
export class SqlWorkspaceStore extends SqlSlice implements WorkspaceStore {
  /** The keys the credentials keep: forgotten at once when this process changes one. */
  readonly #keyCache: ApiKeyCache;

  constructor(db: Database, clock: Clock, keyCache: ApiKeyCache) {
    super(db, clock);
    this.#keyCache = keyCache;
  }

  createWorkspace(workspace: NewWorkspace): Promise<Workspace | null> {
    return insertWorkspaceUnlessTaken(this.db, workspace, this.now());
  }

  getWorkspace(id: string): Promise<Workspace | null> {
    return selectWorkspace(this.db, id);
  }

  listWorkspaces(options: {
    limit: number;
    cursor: string | null;
    externalId: string | null;
  }): Promise<Page<Workspace>> {
    return selectWorkspacePage(this.db, options);
  }

  updateWorkspace(id: string, changes: WorkspaceChanges): Promise<Workspace | null> {
    return updateWorkspace(this.db, id, changes, this.now());
  }

  deleteWorkspace(id: string, options: { cascade: boolean }): Promise<WorkspaceDeletion> {
    // Its keys went with it.
    return this.#keyCache.afterChange(
      () => this.#deleteWorkspace(id, options),
      (deletion) => deletion === "deleted",
    );
  }

  #deleteWorkspace(id: string, options: { cascade: boolean }): Promise<WorkspaceDeletion> {
    return this.db.transaction(async (tx) => {
      if (!(await lockWorkspaceForDeletion(this.db, tx, id))) return "not_found";
      // Judged after the lock: a destination made meanwhile (which takes the workspace's
      // lock to count its destinations, decision 39) is seen.
      if (!options.cascade && (await hasDestinations(tx, id))) return "not_empty";
      await deleteWorkspaceAndContents(this.db, tx, id);
      return "deleted";
    });
  }

  listApiKeys(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<ApiKey>> {
    return selectWorkspaceApiKeyPage(this.db, workspaceId, options);
  }

  revokeApiKey(workspaceId: string, id: string): Promise<boolean> {
    return this.#keyCache.afterChange(
      () => revokeWorkspaceApiKey(this.db, workspaceId, id, this.now()),
      (revoked) => revoked,
    );
  }
}
