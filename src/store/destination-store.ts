import type {
  Destination,
  DestinationChanges,
  DestinationCircuit,
  LastDelivery,
  NewDestination,
  Page,
} from "../interfaces.ts";
import { selectDestinationCircuit } from "./sql/circuits.ts";
import { selectLastDelivery } from "./sql/deliveries.ts";
import {
  deleteDestination,
  insertDestination,
  selectDestination,
  selectDestinationPage,
  updateDestination,
} from "./sql/destinations.ts";
import { SqlSlice } from "./sql-slice.ts";

/** Webhook destinations and what their latest delivery was. */
export interface DestinationStore {
  /** Newest first; `cursor` continues after the last item of the previous page. */
  listDestinations(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<Destination>>;

  createDestination(destination: NewDestination): Promise<Destination>;

  /** Null for an unknown, deleted, or other workspace's id. */
  getDestination(workspaceId: string, id: string): Promise<Destination | null>;

  updateDestination(
    workspaceId: string,
    id: string,
    changes: DestinationChanges,
  ): Promise<Destination | null>;

  /** Returns false for an unknown, already deleted, or other workspace's id. */
  deleteDestination(workspaceId: string, id: string): Promise<boolean>;

  /** The latest delivery to the destination, or null when none was ever queued. */
  getLastDelivery(workspaceId: string, destinationId: string): Promise<LastDelivery | null>;

  /** The destination's circuit (decision 40); null for an unknown or other workspace's id. */
  getCircuit(workspaceId: string, destinationId: string): Promise<DestinationCircuit | null>;
}

/** The DestinationStore over any `Database`: the SQL is in `./sql/`. */
export class SqlDestinationStore extends SqlSlice implements DestinationStore {
  listDestinations(
    workspaceId: string,
    options: { limit: number; cursor: string | null },
  ): Promise<Page<Destination>> {
    return selectDestinationPage(this.db, workspaceId, options);
  }

  createDestination(destination: NewDestination): Promise<Destination> {
    return this.db.transaction((tx) => insertDestination(tx, destination, this.now()));
  }

  getDestination(workspaceId: string, id: string): Promise<Destination | null> {
    return selectDestination(this.db, workspaceId, id);
  }

  updateDestination(
    workspaceId: string,
    id: string,
    changes: DestinationChanges,
  ): Promise<Destination | null> {
    return this.db.transaction((tx) => updateDestination(tx, workspaceId, id, changes, this.now()));
  }

  deleteDestination(workspaceId: string, id: string): Promise<boolean> {
    return deleteDestination(this.db, workspaceId, id, this.now());
  }

  getLastDelivery(workspaceId: string, destinationId: string): Promise<LastDelivery | null> {
    return selectLastDelivery(this.db, workspaceId, destinationId, this.now());
  }

  getCircuit(workspaceId: string, destinationId: string): Promise<DestinationCircuit | null> {
    return selectDestinationCircuit(this.db, workspaceId, destinationId, this.now());
  }
}
