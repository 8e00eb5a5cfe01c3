import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { DestinationLabel } from "../components/destination-label.tsx";
import { Time } from "../components/time.tsx";
import { useDestinationNames, type DestinationName } from "../destination-names.ts";
import { grants, outcomeOf, plural } from "../format.ts";
import { messageOf, useLoad } from "../hooks.ts";
import { repairOf } from "../repair.ts";
import { href } from "../routes.ts";
import { standingOf } from "../standing.ts";
import type { Attempt, DeliveryDetail, EventDetail, WorkspaceAccess } from "../types.ts";

/** Attempts shown at first, newest first; the rest on demand. */
const attemptsShown = 20;

/**
 * One delivery: where it stands and why, and each attempt with the request as it was sent
 * (headers, the signature among them, and the body) and the receiver's answer.
 */
export function DeliveryPage({ workspace, id }: { workspace: WorkspaceAccess; id: string }) {
  const path = inWorkspace(workspace.id, `/deliveries/${encodeURIComponent(id)}`);
  const delivery = useLoad(() => api<DeliveryDetail>("GET", path), `${workspace.id}/${id}`, 2000);
  const eventId = delivery.data?.event_id;
  // The body every attempt sent: the event's notification, the same bytes each time.
  const event = useLoad(
    () =>
      eventId === undefined
        ? Promise.resolve(null)
        : api<EventDetail>(
            "GET",
            inWorkspace(workspace.id, `/events/${encodeURIComponent(eventId)}`),
          ),
    `${workspace.id}/${eventId ?? ""}`,
  );
  const names = useDestinationNames(
    workspace.id,
    delivery.data === null ? [] : [delivery.data.destination_id],
  );
  const [message, setMessage] = useState<string | null>(null);
  const [all, setAll] = useState(false);

  if (delivery.error !== null) {
    return (
      <p class="error" role="alert">
        {delivery.error}
      </p>
    );
  }
  const current = delivery.data;
  if (current === null) return <p>Loading…</p>;
  const standing = standingOf({ ...current, attempts: current.attempt_count });
  const body = event.data === null ? null : notificationOf(event.data);
  const newestFirst = [...current.attempts].reverse();
  const shown = all ? newestFirst : newestFirst.slice(0, attemptsShown);
  const repair = grants(workspace.scopes, "events:write") ? repairOf(current) : null;
  const retry = async (done: string): Promise<void> => {
    try {
      await api("POST", `${path}/retry`);
      setMessage(done);
      delivery.reload();
    } catch (failure) {
      setMessage(`Not sent again: ${messageOf(failure)}`);
    }
  };

  return (
    <>
      <p class="back">
        <a href={href({ page: "deliveries", workspace: workspace.id })}>← All deliveries</a>
      </p>
      <h1>
        Delivery of <span class="id">{current.event_id}</span>
        {current.test && <span class="badge test">test</span>}
      </h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class={`badge ${standing.tone}`}>{standing.label}</span>
          {standing.reason !== null && <span class="reason">{standing.reason}</span>}
        </dd>
        <dt>Destination</dt>
        <dd class="url">
          <DestinationLabel
            workspaceId={workspace.id}
            id={current.destination_id}
            name={names.get(current.destination_id)}
          />
        </dd>
        <dt>Event</dt>
        <dd>
          <a href={href({ page: "event", workspace: workspace.id, id: current.event_id })}>
            {current.event_type} {current.event_id}
          </a>
        </dd>
        <dt>Attempts</dt>
        <dd>{current.attempt_count}</dd>
        <dt>Last error</dt>
        <dd>{current.last_error ?? "—"}</dd>
        <dt>Next attempt</dt>
        <dd>{current.in_flight ? "in flight now" : <Time iso={current.next_attempt_at} />}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={current.created_at} />
        </dd>
      </dl>
      {(repair !== null || message !== null) && (
        <div class="controls">
          {repair !== null && (
            <button type="button" onClick={() => void retry(repair.done)}>
              {repair.label}
            </button>
          )}
          <span role="status">{message}</span>
        </div>
      )}
      <h2>Attempts</h2>
      {current.attempts.length === 0 && (
        <p class="empty">
          {current.attempt_count === 0 ? "Not tried yet." : "No attempt of it is kept any more."}
        </p>
      )}
      <ol class="attempt-list" reversed>
        {shown.map((attempt) => (
          <AttemptView
            key={attempt.attempt}
            attempt={attempt}
            url={names.get(current.destination_id)}
            body={body}
            open={attempt === newestFirst[0]}
          />
        ))}
      </ol>
      {!all && newestFirst.length > attemptsShown && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setAll(true);
          }}
        >
          Show the {plural(newestFirst.length - attemptsShown, "earlier attempt")}
        </button>
      )}
    </>
  );
}

/**
 * The notification's bytes, as sent: the event's JSON (the body's members in the body's order)
 * without what the API adds to it, `test` and the list of its deliveries.
 */
function notificationOf(event: EventDetail): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(event).filter(([key]) => key !== "deliveries" && key !== "test"),
    ),
  );
}

function AttemptView({
  attempt,
  url,
  body,
  open,
}: {
  attempt: Attempt;
  url: DestinationName | undefined;
  body: string | null;
  open: boolean;
}) {
  const outcome = outcomeOf(attempt.status_code, attempt.error);
  const ok =
    attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  return (
    <li class="attempt" data-attempt={attempt.attempt}>
      <details open={open}>
        <summary>
          <span>Attempt {attempt.attempt}</span>{" "}
          <span class={`badge ${ok ? "delivered" : "failed"}`}>{outcome}</span>{" "}
          <span>{attempt.duration_ms} ms</span> <Time iso={attempt.attempted_at} />
        </summary>
        <div class="exchange">
          <section aria-label={`Request of attempt ${attempt.attempt}`}>
            <h3>Request</h3>
            <p class="request-line">
              POST{" "}
              <span class="url">{url?.kind === "url" ? url.url : "the destination's URL"}</span>
            </p>
            <h4>Headers</h4>
            {attempt.request_headers === null ? (
              <p class="muted">Not recorded for this attempt.</p>
            ) : (
              <table class="headers">
                <caption class="visually-hidden">
                  Request headers of attempt {attempt.attempt}
                </caption>
                <tbody>
                  {Object.entries(attempt.request_headers).map(([name, value]) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td>{value}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h4>Body</h4>
            <pre class="answer request-body">{body ?? "Loading…"}</pre>
          </section>
          <section aria-label={`Answer of attempt ${attempt.attempt}`}>
            <h3>Answer</h3>
            <p>
              {attempt.status_code === null
                ? `No answer: ${attempt.error ?? "unknown error"}`
                : `HTTP ${attempt.status_code}`}{" "}
              after {attempt.duration_ms} ms
            </p>
            <h4>Body</h4>
            <pre class="answer">{attempt.response_body ?? ""}</pre>
          </section>
        </div>
      </details>
    </li>
  );
}
