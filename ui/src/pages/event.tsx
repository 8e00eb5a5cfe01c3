import { api, inWorkspace } from "../api.ts";
import { DeliveryTable } from "../components/delivery-table.tsx";
import { Time } from "../components/time.tsx";
import { grants } from "../format.ts";
import { useLoad } from "../hooks.ts";
import { href } from "../routes.ts";
import type { EventDetail, WorkspaceAccess } from "../types.ts";

/** One event as it was sent, and its delivery to each destination (named by URL). */
export function EventPage({ workspace, id }: { workspace: WorkspaceAccess; id: string }) {
  const event = useLoad(
    () => api<EventDetail>("GET", inWorkspace(workspace.id, `/events/${encodeURIComponent(id)}`)),
    `${workspace.id}/${id}`,
    5000,
  );
  return (
    <>
      <p class="back">
        <a href={href({ page: "events", workspace: workspace.id })}>← All events</a>
      </p>
      <h1>
        Event <span class="id">{id}</span>
        {event.data?.test === true && <span class="badge test">test</span>}
      </h1>
      {event.error !== null && (
        <p class="error" role="alert">
          {event.error}
        </p>
      )}
      {event.data !== null && (
        <>
          <dl class="facts">
            <dt>Type</dt>
            <dd>{event.data.type}</dd>
            <dt>Published</dt>
            <dd>
              <Time iso={new Date(event.data.created * 1000).toISOString()} />
            </dd>
            <dt>API version</dt>
            <dd>{event.data.api_version}</dd>
          </dl>
          <h2>Deliveries</h2>
          {event.data.deliveries.length === 0 ? (
            <p class="empty">No destination subscribed to this event when it was published.</p>
          ) : (
            <DeliveryTable
              workspaceId={workspace.id}
              deliveries={event.data.deliveries}
              canRetry={grants(workspace.scopes, "events:write")}
              onChanged={event.reload}
              columns={{ event: false, destination: true }}
              caption={`Deliveries of ${id}`}
            />
          )}
          <h2>Data</h2>
          <pre class="answer">{JSON.stringify(event.data.data, null, 2)}</pre>
        </>
      )}
    </>
  );
}
