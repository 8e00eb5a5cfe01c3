import type { FastifyInstance } from "fastify";
import { newId, newSigningSecret } from "../../crypto/tokens.ts";
import { AppError } from "../../errors.ts";
import { checkDestinationUrl } from "../../net/destination-url.ts";
import type { ApiDependencies } from "../dependencies.ts";
import {
  createBody,
  destinationParams,
  isWellFormedId,
  listQuery,
  parseInput,
  updateBody,
  workspaceParams,
} from "./input.ts";
import { destinationBody, lastDeliveryBody } from "./serialize.ts";

const collection = "/v1/workspaces/:workspace/webhooks";
const member = `${collection}/:id`;

function notFound(id: string): AppError {
  return new AppError("not_found", `No webhook destination ${id} in this workspace.`, {
    param: "id",
  });
}

/** Each route declares its scope; `registerAuthorisation` checks it before the route runs. */
export function registerWebhookRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store, secretBox } = dependencies;

  const read = { config: { scope: "webhooks:read" } } as const;
  const write = { config: { scope: "webhooks:write" } } as const;

  app.get(collection, read, async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const query = parseInput(listQuery, request.query);
    const page = await store.destinations.listDestinations(workspace, {
      limit: query.limit,
      cursor: query.cursor ?? null,
    });
    return { data: page.items.map(destinationBody), next_cursor: page.nextCursor };
  });

  app.post(collection, write, async (request, reply) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const input = parseInput(createBody, request.body);
    const { url } = await checkDestinationUrl(input.url, dependencies);
    const id = newId("dst");
    const secret = newSigningSecret();
    const destination = await store.destinations.createDestination({
      id,
      workspaceId: workspace,
      url: url.href,
      events: input.events,
      secretCiphertext: secretBox.encrypt(secret, id),
    });
    // The only response that ever carries the secret.
    return reply.status(201).send({ ...destinationBody(destination), secret });
  });

  /** The workspace and destination id of a member route; a malformed id names nothing. */
  const destinationOf = (params: unknown) => {
    const { workspace, id } = parseInput(destinationParams, params);
    if (!isWellFormedId(id)) throw notFound(id);
    return { workspace, id };
  };

  app.get(member, read, async (request) => {
    const { workspace, id } = destinationOf(request.params);
    const destination = await store.destinations.getDestination(workspace, id);
    if (destination === null) throw notFound(id);
    const lastDelivery = await store.destinations.getLastDelivery(workspace, id);
    return {
      ...destinationBody(destination),
      last_delivery: lastDelivery === null ? null : lastDeliveryBody(lastDelivery),
    };
  });

  app.patch(member, write, async (request) => {
    const { workspace, id } = destinationOf(request.params);
    const changes = parseInput(updateBody, request.body);
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
    return destinationBody(updated);
  });

  app.delete(member, write, async (request) => {
    const { workspace, id } = destinationOf(request.params);
    if (!(await store.destinations.deleteDestination(workspace, id))) throw notFound(id);
    return { id, deleted: true };
  });
}
