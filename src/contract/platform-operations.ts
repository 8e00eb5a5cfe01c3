import type { ErrorCode } from "../errors.ts";
import { examples } from "./examples.ts";
import { deletionSchema } from "./destinations.ts";
import type { Operation } from "./operations.ts";
import {
  apiKeyPageSchema,
  apiKeyParams,
  createWorkspaceBody,
  deleteWorkspaceQuery,
  listApiKeysQuery,
  listWorkspacesQuery,
  mintApiKeyBody,
  mintedApiKeySchema,
  updateWorkspaceBody,
  workspacePageSchema,
  workspaceParams,
  workspaceSchema,
} from "./workspaces.ts";

/**
 * The platform API's operations (CONTRACT.md "Platform API", decision 42): only an operator
 * key with the operation's scope may call them. Part of `operations`.
 */

const notFound: readonly ErrorCode[] = ["not_found"];

export const platformOperations = {
  createWorkspace: {
    method: "post",
    path: "/v1/workspaces",
    tag: "Workspaces",
    summary: "Create a workspace",
    description:
      "A new tenant. With `external_id`, the platform's own id for it, unique on the server (409 external_id_taken if another workspace has it). Takes `Idempotency-Key`.",
    access: "workspaces:write",
    body: createWorkspaceBody,
    bodyExample: examples.createWorkspace,
    success: {
      status: 201,
      description: "The workspace.",
      schema: workspaceSchema,
      example: examples.workspace,
    },
    errors: ["external_id_taken"],
  },
  listWorkspaces: {
    method: "get",
    path: "/v1/workspaces",
    tag: "Workspaces",
    summary: "List workspaces",
    description:
      "Every workspace on the server, newest first, a page at a time; `external_id=` finds the one with the platform's id.",
    access: "workspaces:read",
    query: listWorkspacesQuery,
    success: { status: 200, description: "A page of workspaces.", schema: workspacePageSchema },
    errors: ["invalid_cursor"],
  },
  getWorkspace: {
    method: "get",
    path: "/v1/workspaces/{workspace}",
    tag: "Workspaces",
    summary: "Get a workspace",
    description: "Its name, external id, metadata and times.",
    access: "workspaces:read",
    params: workspaceParams,
    success: { status: 200, description: "The workspace.", schema: workspaceSchema },
    errors: notFound,
  },
  updateWorkspace: {
    method: "patch",
    path: "/v1/workspaces/{workspace}",
    tag: "Workspaces",
    summary: "Update a workspace",
    description: "Renames it, or replaces its metadata.",
    access: "workspaces:write",
    params: workspaceParams,
    body: updateWorkspaceBody,
    success: { status: 200, description: "The workspace as updated.", schema: workspaceSchema },
    errors: ["not_found", "empty_update"],
  },
  deleteWorkspace: {
    method: "delete",
    path: "/v1/workspaces/{workspace}",
    tag: "Workspaces",
    summary: "Delete a workspace",
    description:
      "Deletes the workspace and everything in it (destinations, events, deliveries and their attempts, API keys, memberships and the users who belonged to it alone, listen sessions, idempotency records) in one transaction. Refused (409 workspace_not_empty) while it has destinations, unless `cascade=true`.",
    access: "workspaces:write",
    params: workspaceParams,
    query: deleteWorkspaceQuery,
    success: { status: 200, description: "Deleted.", schema: deletionSchema },
    errors: ["not_found", "workspace_not_empty"],
  },
  mintApiKey: {
    method: "post",
    path: "/v1/workspaces/{workspace}/api-keys",
    tag: "API keys",
    summary: "Mint an API key",
    description:
      "A new API key of the workspace with the scopes given; the answer carries its token, once. Takes `Idempotency-Key`.",
    access: "workspaces:write",
    params: workspaceParams,
    body: mintApiKeyBody,
    bodyExample: examples.mintApiKey,
    success: {
      status: 201,
      description: "The key, with its token.",
      schema: mintedApiKeySchema,
    },
    errors: notFound,
  },
  listApiKeys: {
    method: "get",
    path: "/v1/workspaces/{workspace}/api-keys",
    tag: "API keys",
    summary: "List API keys",
    description:
      "The workspace's keys in use (not revoked), newest first; never a token or its hash.",
    access: "workspaces:read",
    params: workspaceParams,
    query: listApiKeysQuery,
    success: { status: 200, description: "A page of keys.", schema: apiKeyPageSchema },
    errors: ["not_found", "invalid_cursor"],
  },
  revokeApiKey: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/api-keys/{id}",
    tag: "API keys",
    summary: "Revoke an API key",
    description: "The key stops working at once.",
    access: "workspaces:write",
    params: apiKeyParams,
    success: { status: 200, description: "Revoked.", schema: deletionSchema },
    errors: notFound,
  },
} as const satisfies Record<string, Operation>;
