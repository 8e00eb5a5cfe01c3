import { api, inWorkspace, query } from "../api.ts";
import { LoadMore } from "../components/load-more.tsx";
import { LogFilters } from "../components/log-filters.tsx";
import { Time } from "../components/time.tsx";
import { fieldOf } from "../format.ts";
import { usePaged } from "../paging.ts";
import { href, timeBounds, type Filters } from "../routes.ts";
import type { EventSummary, Page, WorkspaceAccess } from "../types.ts";

/** The event log, newest first: filtered by type and time (kept in the URL), or one by its id. */
export function EventsPage({
  workspace,
  filters,
}: {
  workspace: WorkspaceAccess;
  filters: Filters;
}) {
  const events = usePaged(
    (cursor) =>
      api<Page<EventSummary>>(
        "GET",
        inWorkspace(
          workspace.id,
          `/events${query({
            limit: "100",
            type: filters.type,
            ...timeBounds(filters, Date.now()),
            cursor: cursor ?? undefined,
          })}`,
        ),
      ),
    (event) => event.id,
    (event) => event.created * 1000,
    JSON.stringify([workspace.id, filters]),
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
      <form class="find" role="search" aria-label="Find an event by id" onSubmit={findById}>
        <label for="event-id">Event id</label>
        <input id="event-id" name="id" placeholder="evt_…" required />
        <button type="submit">Find</button>
      </form>
      <LogFilters
        filters={filters}
        onChange={(next) => {
          window.location.hash = href({ page: "events", workspace: workspace.id, filters: next });
        }}
        status={false}
        label="Filter the events"
      />
      {events.error !== null && (
        <p class="error" role="alert">
          {events.error}
        </p>
      )}
      {events.items !== null && events.items.length === 0 && (
        <p class="empty">
          {Object.keys(filters).length > 0 ? "No events match these filters." : "No events yet."}
        </p>
      )}
      {events.items !== null && events.items.length > 0 && (
        <>
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
              {events.items.map((event) => (
                <tr key={event.id}>
                  <td data-label="Id" class="id">
                    <a href={href({ page: "event", workspace: workspace.id, id: event.id })}>
                      {event.id}
                    </a>
                  </td>
                  <td data-label="Type">
                    {event.type}
                    {event.test && <span class="badge test">test</span>}
                  </td>
                  <td data-label="Published">
                    <Time iso={new Date(event.created * 1000).toISOString()} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <LoadMore paged={events} noun={["event", "events"]} />
        </>
      )}
    </>
  );
}
