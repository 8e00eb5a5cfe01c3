import type { FastifyInstance } from "fastify";
import { newEventId } from "../../crypto/tokens.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { workspaceParams } from "../../contract/common.ts";
import { publishBody } from "../../contract/events.ts";
import { accessConfig, operations, routePath, successBody } from "../../contract/operations.ts";
import { parseInput } from "../parse-input.ts";
import { AppError } from "../../errors.ts";
import { nestingDepth } from "./nesting.ts";
import { API_VERSION, serialiseNotification, type NotificationHead } from "./notification.ts";

const { publishEvent: publish } = operations;

export function registerEventRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store, clock, limits, metrics } = dependencies;

  const options = {
    config: { ...accessConfig(publish).config, bodyLimitSetting: "eventBodyLimit" },
    bodyLimit: limits.eventBodyLimit,
  } as const;

  app.post(routePath(publish), options, async (request, reply) => {
    const { workspace } = parseInput(workspaceParams, request.params);
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
    // Committed, with one delivery per matching destination, before the 202 is sent; or,
    // past eventFanOutLimit, refused with nothing written (decision 39).
    await store.queue.publishEvent(
      {
        id: head.id,
        workspaceId: workspace,
        type: head.type,
        apiVersion: head.api_version,
        body: serialiseNotification(head, input.data.object),
        createdAt,
      },
      { fanOutLimit: limits.eventFanOutLimit },
    );
    metrics.eventPublished();
    return reply.status(publish.success.status).send(successBody(publish, head));
  });
}
