import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { useDestinationNames } from "../destination-names.ts";
import { outcomeOf } from "../format.ts";
import { messageOf } from "../hooks.ts";
import { repairOf } from "../repair.ts";
import { href } from "../routes.ts";
import { standingOf } from "../standing.ts";
import type { Delivery } from "../types.ts";
import { DestinationLabel } from "./destination-label.tsx";
import { Time } from "./time.tsx";

/** Which columns a log shows besides those of every log: its event, its destination. */
export interface LogColumns {
  event: boolean;
  destination: boolean;
}

/**
 * Deliveries, newest first, one row each with headed, aligned columns: where it stands (and
 * why), its event, its destination by URL, attempts, the last answer, the next attempt, when
 * it was made, and whether it is a test; a link to its attempts (the request as sent and the
 * answer), and Retry / Retry now / Resend (`repairOf`), whose outcome is said in the row.
 */
export function DeliveryTable({
  workspaceId,
  deliveries,
  canRetry,
  onChanged,
  columns,
  caption,
}: {
  workspaceId: string;
  deliveries: readonly Delivery[];
  canRetry: boolean;
  onChanged: () => void;
  columns: LogColumns;
  caption: string;
}) {
  const names = useDestinationNames(
    workspaceId,
    columns.destination ? deliveries.map((each) => each.destination_id) : [],
  );
  return (
    <table class="list log">
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          {columns.event && <th scope="col">Event type</th>}
          {columns.event && <th scope="col">Event id</th>}
          {columns.destination && <th scope="col">Destination</th>}
          <th scope="col" class="number">
            Attempts
          </th>
          <th scope="col">Last answer</th>
          <th scope="col">Next attempt</th>
          <th scope="col">Created</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => (
          <DeliveryRow
            key={delivery.id}
            workspaceId={workspaceId}
            delivery={delivery}
            canRetry={canRetry}
            onChanged={onChanged}
            columns={columns}
            destination={
              <DestinationLabel
                workspaceId={workspaceId}
                id={delivery.destination_id}
                name={names.get(delivery.destination_id)}
              />
            }
          />
        ))}
      </tbody>
    </table>
  );
}

function DeliveryRow({
  workspaceId,
  delivery,
  canRetry,
  onChanged,
  columns,
  destination,
}: {
  workspaceId: string;
  delivery: Delivery;
  canRetry: boolean;
  onChanged: () => void;
  columns: LogColumns;
  destination: ComponentChildren;
}) {
  const [message, setMessage] = useState<string | null>(null);
  const standing = standingOf(delivery);
  const eventLink = href({ page: "event", workspace: workspaceId, id: delivery.event_id });
  const repair = canRetry ? repairOf(delivery) : null;
  const retry = async (done: string): Promise<void> => {
    try {
      await api(
        "POST",
        inWorkspace(workspaceId, `/deliveries/${encodeURIComponent(delivery.id)}/retry`),
      );
      setMessage(done);
      onChanged();
    } catch (failure) {
      setMessage(`Not sent again: ${messageOf(failure)}`);
    }
  };

  return (
    <tr data-delivery={delivery.id} data-status={delivery.status}>
      <td data-label="Status">
        <div>
          <span class={`badge ${standing.tone}`}>{standing.label}</span>
          {/* Where the event type is not a column (an event's page), the test shows here. */}
          {delivery.test && !columns.event && <span class="badge test">test</span>}
          {standing.reason !== null && <span class="reason">{standing.reason}</span>}
        </div>
      </td>
      {columns.event && (
        <td data-label="Event type">
          <a href={eventLink}>{delivery.event_type}</a>
          {delivery.test && <span class="badge test">test</span>}
        </td>
      )}
      {columns.event && (
        <td data-label="Event id" class="id">
          <a href={eventLink}>{delivery.event_id}</a>
        </td>
      )}
      {columns.destination && (
        <td data-label="Destination" class="url">
          {destination}
        </td>
      )}
      <td data-label="Attempts" class="number">
        {delivery.attempts}
      </td>
      <td data-label="Last answer">
        {delivery.attempts === 0 ? (
          <span class="muted">not tried yet</span>
        ) : (
          <span>
            <span class="outcome">{outcomeOf(delivery.last_status_code, delivery.last_error)}</span>{" "}
            <Time iso={delivery.last_attempt_at} />
          </span>
        )}
      </td>
      <td data-label="Next attempt">
        {delivery.in_flight ? "in flight now" : <Time iso={delivery.next_attempt_at} />}
      </td>
      <td data-label="Created">
        <Time iso={delivery.created_at} />
      </td>
      <td data-label="Actions">
        <div class="row-actions">
          <a href={href({ page: "delivery", workspace: workspaceId, id: delivery.id })}>
            Attempts<span class="visually-hidden"> of {delivery.id}</span>
          </a>
          {repair !== null && (
            <button type="button" class="small" onClick={() => void retry(repair.done)}>
              {repair.label}
            </button>
          )}
          <span role="status" class="row-message">
            {message}
          </span>
        </div>
      </td>
    </tr>
  );
}
