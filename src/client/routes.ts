import type { OperationId, operations } from "../contract/operations.ts";

/**
 * Each operation's method, path template and access, as the client sends it. A copy of
 * `contract/operations.ts` that carries no zod (the client loads none), held to it by the
 * compiler: a path, method or operation that differs from the contract does not build.
 */
export const routes = {
  listWebhooks: {
    method: "get",
    path: "/v1/workspaces/{workspace}/webhooks",
    access: "webhooks:read",
  },
  createWebhook: {
    method: "post",
    path: "/v1/workspaces/{workspace}/webhooks",
    access: "webhooks:write",
  },
  getWebhook: {
    method: "get",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    access: "webhooks:read",
  },
  updateWebhook: {
    method: "patch",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    access: "webhooks:write",
  },
  deleteWebhook: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/webhooks/{id}",
    access: "webhooks:write",
  },
  recoverWebhook: {
    method: "post",
    path: "/v1/workspaces/{workspace}/webhooks/{id}/recover",
    access: "events:write",
  },
  publishEvent: {
    method: "post",
    path: "/v1/workspaces/{workspace}/events",
    access: "events:write",
  },
  listEvents: { method: "get", path: "/v1/workspaces/{workspace}/events", access: "events:read" },
  getEvent: {
    method: "get",
    path: "/v1/workspaces/{workspace}/events/{id}",
    access: "events:read",
  },
  listDeliveries: {
    method: "get",
    path: "/v1/workspaces/{workspace}/deliveries",
    access: "events:read",
  },
  getDelivery: {
    method: "get",
    path: "/v1/workspaces/{workspace}/deliveries/{id}",
    access: "events:read",
  },
  retryDelivery: {
    method: "post",
    path: "/v1/workspaces/{workspace}/deliveries/{id}/retry",
    access: "events:write",
  },
  openListenSession: {
    method: "post",
    path: "/v1/workspaces/{workspace}/listen-sessions",
    access: "events:read",
  },
  listListenSessions: {
    method: "get",
    path: "/v1/workspaces/{workspace}/listen-sessions",
    access: "events:read",
  },
  deleteListenSession: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}",
    access: "events:read",
  },
  streamListenSession: {
    method: "get",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}/stream",
    access: "events:read",
  },
  reportListenResult: {
    method: "post",
    path: "/v1/workspaces/{workspace}/listen-sessions/{id}/results",
    access: "events:read",
  },
  getDeliveryStats: {
    method: "get",
    path: "/v1/workspaces/{workspace}/delivery-stats",
    access: "events:read",
  },
  signIn: { method: "post", path: "/v1/auth/sessions", access: "none" },
  signInBrowser: { method: "post", path: "/v1/auth/browser-sessions", access: "none" },
  whoAmI: { method: "get", path: "/v1/auth/session", access: "credential" },
  signOut: { method: "delete", path: "/v1/auth/session", access: "credential" },
  createWorkspace: { method: "post", path: "/v1/workspaces", access: "workspaces:write" },
  listWorkspaces: { method: "get", path: "/v1/workspaces", access: "workspaces:read" },
  getWorkspace: { method: "get", path: "/v1/workspaces/{workspace}", access: "workspaces:read" },
  updateWorkspace: {
    method: "patch",
    path: "/v1/workspaces/{workspace}",
    access: "workspaces:write",
  },
  deleteWorkspace: {
    method: "delete",
    path: "/v1/workspaces/{workspace}",
    access: "workspaces:write",
  },
  mintApiKey: {
    method: "post",
    path: "/v1/workspaces/{workspace}/api-keys",
    access: "workspaces:write",
  },
  listApiKeys: {
    method: "get",
    path: "/v1/workspaces/{workspace}/api-keys",
    access: "workspaces:read",
  },
  revokeApiKey: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/api-keys/{id}",
    access: "workspaces:write",
  },
  createPortalLink: {
    method: "post",
    path: "/v1/workspaces/{workspace}/portal-links",
    access: "portal:write",
  },
  endPortalSessions: {
    method: "delete",
    path: "/v1/workspaces/{workspace}/portal-sessions",
    access: "portal:write",
  },
  openPortalSession: { method: "post", path: "/v1/auth/portal-sessions", access: "none" },
} as const satisfies {
  readonly [K in OperationId]: Pick<(typeof operations)[K], "method" | "path" | "access">;
};
