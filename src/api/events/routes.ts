import type { FastifyInstance } from "fastify";
import { newEventId } from "../../crypto/tokens.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { workspaceParams } from "../../contract/common.ts";
import { publishBody } from "../../contract/events.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import type { NewEvent } from "../../interfaces.ts";
import { isWellFormedId, parseInput } from "../parse-input.ts";
import { operationalTypeProblem } from "../../event-names.ts";
import { isOperationalEventType } from "../../operations/event-types.ts";
import { AppError } from "../../errors.ts";
import { nestingDepth } from "./nesting.ts";
import { API_VERSION, serialiseNotification, type NotificationHead } from "./notification.ts";

const { publishEvent: publish } = operations;

export function registerEventRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store, clock, limits, metrics } = dependencies;
  const tracing = dependencies.tracing ?? null;

  const options = {
    config: { ...accessConfig(publish).config, bodyLimitSetting: "eventBodyLimit" },
    bodyLimit: limits.eventBodyLimit,
  } as const;

  /**
   * A test event (decision 40) to one destination, which must be an active one of the
   * workspace: unknown (or another workspace's) is 404, paused 409, as a retry's would be.
   */
  const publishTest = async (event: NewEvent, destinationId: string): Promise<void> => {
    const destination = isWellFormedId(destinationId)
      ? await store.destinations.getDestination(event.workspaceId, destinationId)
      : null;
    if (destination === null) {
      throw new AppError(
        "not_found",
        `No webhook destination ${destinationId} in this workspace.`,
        {
          param: "destination",
        },
      );
    }
    if (!destination.active) throw new AppError("destination_inactive");
    // Deleted or paused between the check and the write: nothing was written.
    if (!(await store.queue.publishTestEvent(event, destinationId))) {
      throw new AppError("destination_inactive");
    }
  };

  /** The event and its deliveries (or its test's one delivery, to `destination`). */
  const write = (event: NewEvent, destination: string | undefined): Promise<unknown> =>
    destination === undefined
      ? store.queue.publishEvent(event, {
          fanOutLimit: limits.eventFanOutLimit,
          reach: limits.destinationLimit,
        })
      : publishTest(event, destination);

  app.post(routePath(publish), options, async (request, reply) => {
    const { workspace } = parseInput(workspaceParams, request.params);
    refuseOperationalType(request.body);
    const input = parseInput(publishBody, request.body);
    // Before anything serialises it: JSON.stringify recurses, and a deep enough object
    // overflows its stack. The body is {"data":{"object":…}}: two levels above the object.
    const bodyLimit = limits.eventDepthLimit + 2;
    if (nestingDepth(request.rawBody ?? "", bodyLimit) > bodyLimit) {
      throw new AppError(
        "data_too_deep",
        `data.object nests objects and arrays more than ${limits.eventDepthLimit} deep, the most the server takes (eventDepthLimit).`,
        { param: "data.object" },
      );
    }
    const createdAt = clock.now();
    const head: NotificationHead = {
      id: newEventId(createdAt),
      type: input.type,
      api_version: API_VERSION,
      created: Math.floor(createdAt.getTime() / 1000),
    };
    const event: NewEvent = {
      id: head.id,
      workspaceId: workspace,
      type: head.type,
      apiVersion: head.api_version,
      body: serialiseNotification(head, input.data.object),
      createdAt,
    };
    // Committed, with one delivery per matching destination (or to the test's destination
    // alone), before the 202 is sent; or, past eventFanOutLimit, refused with nothing written
    // (decision 39). Traced, the event is written with its span's traceparent: its attempts link to it.
    if (tracing === null) await write(event, input.destination);
    else {
      const published = { ...event, test: input.destination !== undefined };
      await tracing.tracePublish(published, (traceparent) =>
        write({ ...event, traceparent }, input.destination),
      );
    }
    metrics.eventPublished();
    return reply
      .status(publish.success.status)
      .send(successBody(publish, { ...head, test: input.destination !== undefined }));
  });
}

/**
 * An operator's event type (decision 48) is refused by a code of its own rather than as one
 * more unknown type, so that whoever tries learns why.
 */
function refuseOperationalType(body: unknown): void {
  const type = typeof body === "object" && body !== null ? (body as { type?: unknown }).type : null;
  if (isOperationalEventType(type)) {
    throw new AppError("operational_event_type", operationalTypeProblem(type), { param: "type" });
  }
}
