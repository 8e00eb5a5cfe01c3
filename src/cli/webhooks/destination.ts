import { membersOf } from "../../contract/common.ts";
import { destinationSchema } from "../../contract/destinations.ts";
import { pathSegment, workspacePath } from "../client/api-paths.ts";

/**
 * The destinations API as the command line reads it: the contract's schemas (`src/contract/`).
 * A secret is kept only where the API issues one (create), and is never printed.
 */

/** The members of a destination, as the contract gives them. */
export const DESTINATION_FIELDS = membersOf(destinationSchema);

export {
  createdDestinationSchema,
  deletionSchema,
  destinationSchema,
  destinationWithDeliverySchema,
  type DestinationBody as Destination,
} from "../../contract/destinations.ts";

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
