import type { FastifyInstance } from "fastify";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { apiKeyParams, listApiKeysQuery, mintApiKeyBody } from "../../contract/workspaces.ts";
import { hashToken, newApiToken, newId } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import { workspaceNotFound, workspaceOf } from "./routes.ts";
import { apiKeyBody } from "./serialize.ts";

const { mintApiKey: mint, listApiKeys: list, revokeApiKey: revoke } = operations;

function keyNotFound(id: string): AppError {
  return new AppError("not_found", `No API key ${id} in use in this workspace.`, { param: "id" });
}

/**
 * A workspace's API keys over HTTP (decision 42): minted with workspace scopes only (an
 * operator key is made on the host), listed without token or hash, revoked at once.
 */
export function registerApiKeyRoutes(
  app: FastifyInstance,
  dependencies: Pick<ApiDependencies, "store" | "clock">,
): void {
  const { store, clock } = dependencies;

  /** The path's workspace, which must exist. */
  const existingWorkspace = async (params: unknown): Promise<string> => {
    const id = workspaceOf(params);
    if ((await store.workspaces.getWorkspace(id)) === null) throw workspaceNotFound(id);
    return id;
  };

  app.post(routePath(mint), accessConfig(mint), async (request, reply) => {
    const workspaceId = await existingWorkspace(request.params);
    const input = parseInput(mintApiKeyBody, request.body);
    if (input.expires_at !== undefined && input.expires_at <= clock.now()) {
      throw new AppError("invalid_request", "expires_at must be in the future.", {
        param: "expires_at",
      });
    }
    const token = newApiToken();
    const key = await store.credentials.createApiKey({
      id: newId("key"),
      workspaceId,
      tokenHash: hashToken(token),
      scopes: input.scopes,
      name: input.name ?? null,
      expiresAt: input.expires_at ?? null,
    });
    // The only answer that ever carries the token.
    return reply.status(mint.success.status).send(successBody(mint, { ...apiKeyBody(key), token }));
  });

  app.get(routePath(list), accessConfig(list), async (request) => {
    const workspaceId = await existingWorkspace(request.params);
    const query = parseInput(listApiKeysQuery, request.query);
    const page = await store.workspaces.listApiKeys(workspaceId, {
      limit: query.limit,
      cursor: query.cursor ?? null,
    });
    return successBody(list, { data: page.items.map(apiKeyBody), next_cursor: page.nextCursor });
  });

  app.delete(routePath(revoke), accessConfig(revoke), async (request) => {
    const { workspace, id } = parseInput(apiKeyParams, request.params);
    if (!isWellFormedId(workspace) || !isWellFormedId(id)) throw keyNotFound(id);
    if (!(await store.workspaces.revokeApiKey(workspace, id))) throw keyNotFound(id);
    return successBody(revoke, { id, deleted: true });
  });
}
