import type { z } from "zod";
import type {
  CircuitBody,
  DestinationBody,
  DestinationCircuitBody,
  LastDeliveryBody,
  createdDestinationSchema,
  deletionSchema,
  destinationWithDeliverySchema,
} from "../../contract/destinations.ts";
import {
  arrayOf,
  isBoolean,
  isInteger,
  isString,
  nullable,
  objectOf,
  oneOf,
  type AnswerShape,
  type Guard,
  type ObjectGuard,
} from "../client/answer-shape.ts";
import { pathSegment, workspacePath } from "../client/api-paths.ts";

/**
 * The destinations API as the command line reads it: the answers of the contract's schemas
 * (`src/contract/destinations.ts`), checked by guards that load no zod (`answer-shape.ts`).
 * A secret is kept only where the API issues one (create), and is never printed.
 */

export type { DestinationBody as Destination } from "../../contract/destinations.ts";

const contract = () => import("../../contract/destinations.ts");

const destinationMembers = {
  id: isString,
  url: isString,
  events: arrayOf(isString),
  active: isBoolean,
  created_at: isString,
  updated_at: isString,
};

const isDestination: ObjectGuard<DestinationBody> = objectOf(destinationMembers);

/** The members of a destination, as the contract gives them. */
export const DESTINATION_FIELDS = isDestination.members;

export const destinationShape: AnswerShape<DestinationBody> = {
  accepts: isDestination,
  schema: async () => (await contract()).destinationSchema,
};

export const createdDestinationShape: AnswerShape<z.output<typeof createdDestinationSchema>> = {
  accepts: objectOf({
    ...destinationMembers,
    secret: (value): value is string => isString(value) && value.length >= 1,
  }),
  schema: async () => (await contract()).createdDestinationSchema,
};

const isCircuit: Guard<CircuitBody> = objectOf({
  state: oneOf(["open", "half_open"]),
  open_until: isString,
  opens: isInteger,
  error: nullable(isString),
});

const isLastDelivery: Guard<LastDeliveryBody> = objectOf({
  status: oneOf(["pending", "delivered", "failed"]),
  attempts: isInteger,
  last_attempt_at: nullable(isString),
  event: isString,
  notification_id: isString,
  next_attempt_at: nullable(isString),
  last_status_code: nullable(isInteger),
  last_error: nullable(isString),
  circuit: nullable(isCircuit),
});

const isDestinationCircuit: Guard<DestinationCircuitBody> = objectOf({
  state: oneOf(["closed", "open", "half_open"]),
  open_until: nullable(isString),
  opens: isInteger,
  reason: nullable(isString),
});

export const destinationWithDeliveryShape: AnswerShape<
  z.output<typeof destinationWithDeliverySchema>
> = {
  accepts: objectOf({
    ...destinationMembers,
    last_delivery: nullable(isLastDelivery),
    circuit: isDestinationCircuit,
  }),
  schema: async () => (await contract()).destinationWithDeliverySchema,
};

export const deletionShape: AnswerShape<z.output<typeof deletionSchema>> = {
  accepts: objectOf({ id: isString, deleted: oneOf([true]) }),
  schema: async () => (await contract()).deletionSchema,
};

/** Signing secrets are returned by create alone; anything else that carries one drops it. */
export function withoutSecret<T extends Record<string, unknown>>(record: T): Omit<T, "secret"> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => key !== "secret")) as Omit<
    T,
    "secret"
  >;
}

export function webhooksPath(workspace: string, command: string): string {
  return `${workspacePath(workspace, command)}/webhooks`;
}

export function webhookPath(workspace: string, id: string, command: string): string {
  return `${webhooksPath(workspace, command)}/${pathSegment(id, "destination id", command)}`;
}
