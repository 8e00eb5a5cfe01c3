import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { newEventId } from "../../crypto/tokens.ts";
import { EVENT_TYPES } from "../../interfaces.ts";
import type { ApiDependencies } from "../dependencies.ts";
import { parseInput, workspaceParams } from "../webhooks/input.ts";
import { AppError } from "../../errors.ts";
import { nestingDepth } from "./nesting.ts";
import { API_VERSION, serialiseNotification, type NotificationHead } from "./notification.ts";

const publishBody = z.strictObject({
  type: z.enum(EVENT_TYPES, { error: `type must be one of: ${EVENT_TYPES.join(", ")}` }),
  data: z.strictObject({
    // A plain-object check, not z.record: JSON's keys are strings already, and checking each
    // of a 256 KiB object's 20,000 members took the main thread 6–12 ms.
    object: z.custom<Record<string, unknown>>(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      { error: "data.object must be a JSON object" },
    ),
  }),
});

export function registerEventRoutes(app: FastifyInstance, dependencies: ApiDependencies): void {
  const { store, clock, limits, metrics } = dependencies;

  const publish = {
    config: { scope: "events:write", bodyLimitSetting: "eventBodyLimit" },
    bodyLimit: limits.eventBodyLimit,
  } as const;

  app.post("/v1/workspaces/:workspace/events", publish, async (request, reply) => {
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
    // Committed, with one delivery per matching destination, before the 202 is sent.
    await store.queue.publishEvent({
      id: head.id,
      workspaceId: workspace,
      type: head.type,
      apiVersion: head.api_version,
      body: serialiseNotification(head, input.data.object),
      createdAt,
    });
    metrics.eventPublished();
    return reply.status(202).send(head);
  });
}
