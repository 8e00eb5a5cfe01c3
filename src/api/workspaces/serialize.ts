import type { ApiKeyBody, WorkspaceBody } from "../../contract/workspaces.ts";
import { SCOPES, type ApiKey, type Scope, type Workspace } from "../../interfaces.ts";

/** The workspace as the platform API shows it (the contract's `Workspace`). */
export function workspaceBody(workspace: Workspace): WorkspaceBody {
  return {
    id: workspace.id,
    name: workspace.name,
    external_id: workspace.externalId,
    metadata: { ...workspace.metadata },
    created_at: workspace.createdAt.toISOString(),
    updated_at: workspace.updatedAt.toISOString(),
  };
}

/** A workspace's key as listed: never its token or its hash. */
export function apiKeyBody(key: ApiKey): ApiKeyBody {
  return {
    id: key.id,
    // A workspace's key holds workspace scopes only; the filter keeps the type honest.
    scopes: key.scopes.filter((scope): scope is Scope =>
      (SCOPES as readonly string[]).includes(scope),
    ),
    name: key.name,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}
