import { useEffect, useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { formatTime, outcomeOf } from "../format.ts";
import { messageOf } from "../hooks.ts";
import { href } from "../routes.ts";
import type { Delivery, DeliveryDetail } from "../types.ts";

/** What a delivery's row links to: its event (in a destination's log) or its destination (in an event's). */
export type DeliveryLink = "event" | "destination";

/**
 * Deliveries, newest first, each with its attempts on demand: time, outcome, duration and the
 * receiver's answer, which is shown as text (it is whatever the receiver sent).
 */
export function DeliveryList({
  workspaceId,
  deliveries,
  canRetry,
  onChanged,
  link,
}: {
  workspaceId: string;
  deliveries: Delivery[];
  canRetry: boolean;
  onChanged: () => void;
  link: DeliveryLink;
}) {
  if (deliveries.length === 0) return <p>No deliveries yet.</p>;
  return (
    <ul class="deliveries">
      {deliveries.map((delivery) => (
        <DeliveryItem
          key={delivery.id}
          workspaceId={workspaceId}
          delivery={delivery}
          canRetry={canRetry}
          onChanged={onChanged}
          link={link}
        />
      ))}
    </ul>
  );
}

function DeliveryItem({
  workspaceId,
  delivery,
  canRetry,
  onChanged,
  link,
}: {
  workspaceId: string;
  delivery: Delivery;
  canRetry: boolean;
  onChanged: () => void;
  link: DeliveryLink;
}) {
  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  const [open, setOpen] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const path = inWorkspace(workspaceId, `/deliveries/${encodeURIComponent(delivery.id)}`);

  // Read when opened, and again whenever the list shows another attempt or status.
  useEffect(() => {
    if (!open) return undefined;
    let current = true;
    api<DeliveryDetail>("GET", path).then(
      (loaded) => {
        if (current) setDetail(loaded);
      },
      (failure: unknown) => {
        if (current) setMessage(messageOf(failure));
      },
    );
    return () => {
      current = false;
    };
  }, [open, path, delivery.attempts, delivery.status]);
  const retry = async (): Promise<void> => {
    try {
      await api("POST", `${path}/retry`);
      setMessage("Queued to be sent again.");
      setDetail(null);
      setOpen(false);
      onChanged();
    } catch (failure) {
      setMessage(messageOf(failure));
    }
  };
  const attemptsId = `attempts-${delivery.id}`;

  return (
    <li class={`delivery status-${delivery.status}`} data-delivery={delivery.id}>
      <div class="delivery-head">
        <span class={`badge ${delivery.status}`}>{delivery.status}</span>
        {link === "event" ? (
          <a href={href({ page: "event", workspace: workspaceId, id: delivery.event_id })}>
            {delivery.event_type}
          </a>
        ) : delivery.destination_id.startsWith("lsn_") ? (
          // A `svc listen` session: not a destination, it has no page here.
          <span>to listen session {delivery.destination_id}</span>
        ) : (
          <a
            href={href({
              page: "destination",
              workspace: workspaceId,
              id: delivery.destination_id,
            })}
          >
            to {delivery.destination_id}
          </a>
        )}
        <span>
          {delivery.attempts} {delivery.attempts === 1 ? "attempt" : "attempts"}
        </span>
        <span>
          last: {outcomeOf(delivery.last_status_code, delivery.last_error)},{" "}
          <time dateTime={delivery.last_attempt_at ?? delivery.created_at}>
            {formatTime(delivery.last_attempt_at ?? delivery.created_at)}
          </time>
        </span>
        <span class="actions">
          <button
            type="button"
            class="secondary"
            aria-expanded={open}
            aria-controls={attemptsId}
            onClick={() => {
              setOpen(!open);
            }}
          >
            {open ? "Hide attempts" : "Attempts"}
          </button>
          {canRetry && !delivery.in_flight && delivery.status !== "pending" && (
            <button type="button" onClick={() => void retry()}>
              Retry
            </button>
          )}
        </span>
      </div>
      {message !== null && <p role="status">{message}</p>}
      {open && (
        <div id={attemptsId}>
          {detail === null ? (
            <p>Loading attempts…</p>
          ) : (
            <table class="attempts">
              <caption class="visually-hidden">Attempts of {delivery.id}</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Time</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Answer</th>
                </tr>
              </thead>
              <tbody>
                {detail.attempts.map((attempt) => (
                  <tr key={attempt.attempt}>
                    <td data-label="#">{attempt.attempt}</td>
                    <td data-label="Time">
                      <time dateTime={attempt.attempted_at}>
                        {formatTime(attempt.attempted_at)}
                      </time>
                    </td>
                    <td data-label="Status">{outcomeOf(attempt.status_code, attempt.error)}</td>
                    <td data-label="Duration">{attempt.duration_ms} ms</td>
                    <td data-label="Answer">
                      <pre class="answer">{attempt.response_body ?? ""}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </li>
  );
}
