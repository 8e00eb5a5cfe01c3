import { useState } from "preact/hooks";
import { api, inWorkspace, query } from "../api.ts";
import { fieldOf, formatTime } from "../format.ts";
import { useLoad } from "../hooks.ts";
import { href } from "../routes.ts";
import {
  EVENT_SUBSCRIPTIONS,
  type EventSummary,
  type Page,
  type WorkspaceAccess,
} from "../types.ts";

/** The event log, newest first: by type, or straight to one event by its id. */
export function EventsPage({ workspace }: { workspace: WorkspaceAccess }) {
  const [type, setType] = useState("");
  const events = useLoad(
    () =>
      api<Page<EventSummary>>(
        "GET",
        inWorkspace(workspace.id, `/events${query({ limit: "50", type })}`),
      ),
    `${workspace.id}/${type}`,
    5000,
  );

  const findById = (event: SubmitEvent): void => {
    event.preventDefault();
    const id = fieldOf(new FormData(event.currentTarget as HTMLFormElement), "id").trim();
    if (id !== "") window.location.hash = href({ page: "event", workspace: workspace.id, id });
  };

  return (
    <>
      <h1>Events</h1>
      <div class="search">
        <form role="search" aria-label="Find an event by id" onSubmit={findById}>
          <label for="event-id">Event id</label>
          <input id="event-id" name="id" placeholder="evt_…" required />
          <button type="submit">Find</button>
        </form>
        <div>
          <label for="event-type">Type</label>
          <select
            id="event-type"
            value={type}
            onChange={(event) => {
              setType(event.currentTarget.value);
            }}
          >
            <option value="">All types</option>
            {EVENT_SUBSCRIPTIONS.filter((name) => name !== "*").map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
      </div>
      {events.error !== null && (
        <p class="error" role="alert">
          {events.error}
        </p>
      )}
      {events.data !== null && events.data.data.length === 0 && <p>No events.</p>}
      {events.data !== null && events.data.data.length > 0 && (
        <table class="list">
          <caption class="visually-hidden">Events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Type</th>
              <th scope="col">Published</th>
            </tr>
          </thead>
          <tbody>
            {events.data.data.map((event) => (
              <tr key={event.id}>
                <td data-label="Id">
                  <a href={href({ page: "event", workspace: workspace.id, id: event.id })}>
                    {event.id}
                  </a>
                </td>
                <td data-label="Type">{event.type}</td>
                <td data-label="Published">
                  {formatTime(new Date(event.created * 1000).toISOString())}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
