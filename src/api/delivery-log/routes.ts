import type { FastifyInstance } from "fastify";
import { AppError, type ErrorCode } from "../../errors.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { workspaceParams } from "../../contract/common.ts";
import {
  deliveryParams,
  eventParams,
  listDeliveriesQuery,
  recoverBody,
} from "../../contract/delivery-log.ts";
import { destinationParams } from "../../contract/destinations.ts";
import { listEventsQuery } from "../../contract/events.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import {
  deliveryBody,
  deliveryDetailBody,
  eventDetailBody,
  eventSummaryBody,
} from "./serialize.ts";

/** When an `evt_` or `dlv_` id says it was made: its 12 hex digits of milliseconds. */
function timeOfId(id: string): number | null {
  const match = /^(?:evt|dlv)_([0-9a-f]{12})/.exec(id);
  return match?.[1] === undefined ? null : Number.parseInt(match[1], 16);
}

/**
 * The delivery log and recovery (CONTRACT.md "Delivery log and recovery", decision 30):
 * reading needs `events:read`, sending again `events:write`. Another workspace's ids, like
 * unknown ones, are 404; one older than the retention is 404 `event_expired` or
 * `delivery_expired`, so that a user knows why it is gone.
 */
export function registerDeliveryLogRoutes(
  app: FastifyInstance,
  dependencies: ApiDependencies,
): void {
  const { store, clock, eventRetentionMs } = dependencies;
  const { listEvents, getEvent, listDeliveries, getDelivery, retryDelivery, recoverWebhook } =
    operations;

  const missing = (kind: "event" | "delivery", id: string): AppError => {
    const madeAt = timeOfId(id);
    const expired = madeAt !== null && madeAt < clock.now().getTime() - eventRetentionMs;
    const code: ErrorCode = expired ? `${kind}_expired` : "not_found";
    return new AppError(code, expired ? undefined : `No ${kind} ${id} in this workspace.`, {
      param: "id",
    });
  };
  /** The workspace and id of a member route; a malformed id names nothing. */
  const memberOf = (params: unknown, kind: "event" | "delivery") => {
    const { workspace, id } = parseInput(kind === "event" ? eventParams : deliveryParams, params);
    if (!isWellFormedId(id)) throw missing(kind, id);
    return { workspace, id };
  };

  app.get(routePath(listEvents), accessConfig(listEvents), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const { limit, cursor, ...filter } = parseInput(listEventsQuery, request.query);
    const page = await store.log.listEvents(workspace, filter, { limit, cursor: cursor ?? null });
    return successBody(listEvents, {
      data: page.items.map(eventSummaryBody),
      next_cursor: page.nextCursor,
    });
  });

  app.get(routePath(getEvent), accessConfig(getEvent), async (request) => {
    const { workspace, id } = memberOf(request.params, "event");
    const event = await store.log.getEvent(workspace, id);
    if (event === null) throw missing("event", id);
    return successBody(getEvent, eventDetailBody(event));
  });

  app.get(routePath(listDeliveries), accessConfig(listDeliveries), async (request) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    const query = parseInput(listDeliveriesQuery, request.query);
    const page = await store.log.listDeliveries(
      workspace,
      {
        destinationId: query.destination,
        eventId: query.event,
        status: query.status,
        eventType: query.type,
        since: query.since,
        until: query.until,
      },
      { limit: query.limit, cursor: query.cursor ?? null },
    );
    return successBody(listDeliveries, {
      data: page.items.map(deliveryBody),
      next_cursor: page.nextCursor,
    });
  });

  app.get(routePath(getDelivery), accessConfig(getDelivery), async (request) => {
    const { workspace, id } = memberOf(request.params, "delivery");
    const delivery = await store.log.getDelivery(workspace, id);
    if (delivery === null) throw missing("delivery", id);
    return successBody(getDelivery, deliveryDetailBody(delivery));
  });

  app.post(routePath(retryDelivery), accessConfig(retryDelivery), async (request, reply) => {
    const { workspace, id } = memberOf(request.params, "delivery");
    const outcome = await store.log.retryDelivery(workspace, id);
    if (outcome === null) throw missing("delivery", id);
    switch (outcome.kind) {
      case "in_flight":
        throw new AppError("delivery_in_flight", undefined, { param: "id" });
      case "destination_inactive":
        throw new AppError("destination_inactive");
      case "queued":
        return reply
          .status(retryDelivery.success.status)
          .send(successBody(retryDelivery, deliveryBody(outcome.delivery)));
    }
  });

  app.post(routePath(recoverWebhook), accessConfig(recoverWebhook), async (request, reply) => {
    const { workspace, id } = parseInput(destinationParams, request.params);
    const { since } = parseInput(recoverBody, request.body);
    const destination = isWellFormedId(id)
      ? await store.destinations.getDestination(workspace, id)
      : null;
    if (destination === null) {
      throw new AppError("not_found", `No webhook destination ${id} in this workspace.`, {
        param: "id",
      });
    }
    if (!destination.active) throw new AppError("destination_inactive");
    const queued = await store.log.recoverDeliveries(id, since);
    return reply
      .status(recoverWebhook.success.status)
      .send(successBody(recoverWebhook, { queued }));
  });
}
