import type { FastifyInstance } from "fastify";
import { destinationSecretContext } from "../../crypto/sealing-contexts.ts";
import { newId, newSigningSecret } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { checkDestinationUrl } from "../../net/destination-url.ts";
import { workspaceParams } from "../../contract/common.ts";
import {
  createDestinationBody,
  destinationParams,
  listDestinationsQuery,
  updateDestinationBody,
} from "../../contract/destinations.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import { circuitBody, destinationBody, lastDeliveryBody } from "./serialize.ts";

const {
  listWebhooks: list,
  createWebhook: create,
  getWebhook: get,
  updateWebhook: update,
  deleteWebhook: remove,
} = operations;

function notFound(id: string): AppError {
  return new AppError("not_found", `No webhook destination ${id} in this workspace.`, {
    param: "id",
  });
}

/**
 * The destinations API: paths, scopes and parsers from the contract's operations;
 * `registerAuthorisation` checks each scope before the route runs.
 */
export function registerWebhookRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store, secretBox } = dependencies;

  app.get(routePath(list), accessConfig(list), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const query = parseInput(listDestinationsQuery, request.query);
    const page = await store.destinations.listDestinations(workspace, {
      limit: query.limit,
      cursor: query.cursor ?? null,
    });
    return successBody(list, {
      data: page.items.map(destinationBody),
      next_cursor: page.nextCursor,
    });
  });

  app.post(routePath(create), accessConfig(create), async (request, reply) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const input = parseInput(createDestinationBody, request.body);
    const { url } = await checkDestinationUrl(input.url, dependencies);
    const id = newId("dst");
    const secret = newSigningSecret();
    const destination = await store.destinations.createDestination({
      id,
      workspaceId: workspace,
      url: url.href,
      events: input.events,
      secretCiphertext: secretBox.encrypt(secret, destinationSecretContext(id)),
    });
    // The only response that ever carries the secret.
    return reply
      .status(create.success.status)
      .send(successBody(create, { ...destinationBody(destination), secret }));
  });

  /** The workspace and destination id of a member route; a malformed id names nothing. */
  const destinationOf = (params: unknown) => {
    const { workspace, id } = parseInput(destinationParams, params);
    if (!isWellFormedId(id)) throw notFound(id);
    return { workspace, id };
  };

  app.get(routePath(get), accessConfig(get), async (request) => {
    const { workspace, id } = destinationOf(request.params);
    const destination = await store.destinations.getDestination(workspace, id);
    if (destination === null) throw notFound(id);
    const lastDelivery = await store.destinations.getLastDelivery(workspace, id);
    const circuit = await store.destinations.getCircuit(workspace, id);
    if (circuit === null) throw notFound(id);
    return successBody(get, {
      ...destinationBody(destination),
      last_delivery: lastDelivery === null ? null : lastDeliveryBody(lastDelivery),
      circuit: circuitBody(circuit),
    });
  });

  app.patch(routePath(update), accessConfig(update), async (request) => {
    const { workspace, id } = destinationOf(request.params);
    const changes = parseInput(updateDestinationBody, request.body);
    if (changes.url === undefined && changes.events === undefined && changes.active === undefined) {
      throw new AppError("empty_update");
    }
    if ((await store.destinations.getDestination(workspace, id)) === null) throw notFound(id);
    const url =
      changes.url === undefined
        ? undefined
        : (await checkDestinationUrl(changes.url, dependencies)).url.href;
    const updated = await store.destinations.updateDestination(workspace, id, { ...changes, url });
    if (updated === null) throw notFound(id);
    return successBody(update, destinationBody(updated));
  });

  app.delete(routePath(remove), accessConfig(remove), async (request) => {
    const { workspace, id } = destinationOf(request.params);
    if (!(await store.destinations.deleteDestination(workspace, id))) throw notFound(id);
    return successBody(remove, { id, deleted: true });
  });
}
