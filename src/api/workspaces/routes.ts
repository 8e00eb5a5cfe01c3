import type { FastifyInstance } from "fastify";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import {
  createWorkspaceBody,
  deleteWorkspaceQuery,
  listWorkspacesQuery,
  updateWorkspaceBody,
  workspaceParams,
} from "../../contract/workspaces.ts";
import { newId } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import { workspaceBody } from "./serialize.ts";

const {
  createWorkspace: create,
  listWorkspaces: list,
  getWorkspace: get,
  updateWorkspace: update,
  deleteWorkspace: remove,
} = operations;

export function workspaceNotFound(id: string): AppError {
  return new AppError("not_found", `No workspace ${id}.`, { param: "workspace" });
}

/** The workspace of an operator route's path; a malformed id names nothing. */
export function workspaceOf(params: unknown): string {
  const { workspace } = parseInput(workspaceParams, params);
  if (!isWellFormedId(workspace)) throw workspaceNotFound(workspace);
  return workspace;
}

/**
 * Workspaces over HTTP (decision 42): paths, operator scopes and parsers from the contract;
 * `registerAuthorisation` lets only an operator key with the scope through.
 */
export function registerWorkspaceRoutes(
  app: FastifyInstance,
  dependencies: Pick<ApiDependencies, "store">,
): void {
  const { workspaces } = dependencies.store;

  app.post(routePath(create), accessConfig(create), async (request, reply) => {
    const input = parseInput(createWorkspaceBody, request.body);
    const workspace = await workspaces.createWorkspace({
      id: newId("ws"),
      name: input.name,
      externalId: input.external_id ?? null,
      metadata: input.metadata ?? {},
    });
    if (workspace === null) {
      throw new AppError(
        "external_id_taken",
        `Another workspace has the external_id ${JSON.stringify(input.external_id)}. Find it with GET /v1/workspaces?external_id=…, or use another id.`,
        { param: "external_id" },
      );
    }
    return reply.status(create.success.status).send(successBody(create, workspaceBody(workspace)));
  });

  app.get(routePath(list), accessConfig(list), async (request) => {
    const query = parseInput(listWorkspacesQuery, request.query);
    const page = await workspaces.listWorkspaces({
      limit: query.limit,
      cursor: query.cursor ?? null,
      externalId: query.external_id ?? null,
    });
    return successBody(list, { data: page.items.map(workspaceBody), next_cursor: page.nextCursor });
  });

  app.get(routePath(get), accessConfig(get), async (request) => {
    const id = workspaceOf(request.params);
    const workspace = await workspaces.getWorkspace(id);
    if (workspace === null) throw workspaceNotFound(id);
    return successBody(get, workspaceBody(workspace));
  });

  app.patch(routePath(update), accessConfig(update), async (request) => {
    const id = workspaceOf(request.params);
    const changes = parseInput(updateWorkspaceBody, request.body);
    if (changes.name === undefined && changes.metadata === undefined) {
      throw new AppError("empty_update", "Supply name, metadata or both to update.");
    }
    const workspace = await workspaces.updateWorkspace(id, changes);
    if (workspace === null) throw workspaceNotFound(id);
    return successBody(update, workspaceBody(workspace));
  });

  app.delete(routePath(remove), accessConfig(remove), async (request) => {
    const id = workspaceOf(request.params);
    const { cascade } = parseInput(deleteWorkspaceQuery, request.query);
    const outcome = await workspaces.deleteWorkspace(id, { cascade });
    switch (outcome) {
      case "not_found":
        throw workspaceNotFound(id);
      case "not_empty":
        throw new AppError(
          "workspace_not_empty",
          `Workspace ${id} still has destinations. Delete them first, or delete it with everything in it: ?cascade=true.`,
        );
      case "deleted":
        return successBody(remove, { id, deleted: true });
    }
  });
}
