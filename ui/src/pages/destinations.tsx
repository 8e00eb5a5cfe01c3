import { useContext, useState } from "preact/hooks";
import { api, inWorkspace, query } from "../api.ts";
import { AttemptsChart } from "../components/chart.tsx";
import { CreateDestination } from "../components/create-destination.tsx";
import { HealthCells } from "../components/health.tsx";
import { LoadMore } from "../components/load-more.tsx";
import { SecretPanel } from "../components/secret-panel.tsx";
import { rememberDestination } from "../destination-names.ts";
import { takeFlash } from "../flash.ts";
import { grants } from "../format.ts";
import { useLoad } from "../hooks.ts";
import { usePaged } from "../paging.ts";
import { href } from "../routes.ts";
import { SurfaceContext } from "../surface.ts";
import type { DeliveryStats, Destination, Page, WorkspaceAccess } from "../types.ts";

/** The workspace at a glance: its chart, its destinations with their health, a new one. */
export function DestinationsPage({ workspace }: { workspace: WorkspaceAccess }) {
  const canWrite = grants(workspace.scopes, "webhooks:write");
  const canReadLog = grants(workspace.scopes, "events:read");
  const destinations = usePaged(
    async (cursor) => {
      const page = await api<Page<Destination>>(
        "GET",
        inWorkspace(
          workspace.id,
          `/webhooks${query({ limit: "100", cursor: cursor ?? undefined })}`,
        ),
      );
      for (const destination of page.data) rememberDestination(workspace.id, destination);
      return page;
    },
    (destination) => destination.id,
    (destination) => Date.parse(destination.created_at),
    workspace.id,
  );
  const stats = useLoad(
    () =>
      canReadLog
        ? api<DeliveryStats>("GET", inWorkspace(workspace.id, "/delivery-stats"))
        : Promise.resolve(null),
    workspace.id,
    15_000,
  );
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const [notice] = useState(takeFlash);
  const health = new Map(
    (stats.data?.destinations ?? []).map((each) => [each.destination_id, each]),
  );
  const empty = destinations.items !== null && destinations.items.length === 0;

  return (
    <>
      <h1>Destinations</h1>
      {notice !== null && (
        <p role="status" class="notice">
          {notice}
        </p>
      )}
      {stats.data != null && !empty && <AttemptsChart stats={stats.data} label="This workspace" />}
      {created !== null && (
        <SecretPanel
          destinationId={created.id}
          secret={created.secret}
          onDismiss={() => {
            setCreated(null);
          }}
        />
      )}
      {destinations.error !== null && (
        <p class="error" role="alert">
          {destinations.error}
        </p>
      )}
      {empty && <EmptyWorkspace workspace={workspace} canWrite={canWrite} />}
      {destinations.items !== null && destinations.items.length > 0 && (
        <>
          <table class="list">
            <caption class="visually-hidden">Destinations and their health</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">State</th>
                <th scope="col">Health</th>
                <th scope="col">Success (24 h)</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Failing since</th>
              </tr>
            </thead>
            <tbody>
              {destinations.items.map((destination) => (
                <tr key={destination.id}>
                  <td data-label="URL">
                    <a
                      class="url"
                      href={href({
                        page: "destination",
                        workspace: workspace.id,
                        id: destination.id,
                      })}
                    >
                      {destination.url}
                    </a>
                  </td>
                  <td data-label="State">{destination.active ? "Active" : "Paused"}</td>
                  <HealthCells health={health.get(destination.id)} />
                </tr>
              ))}
            </tbody>
          </table>
          <LoadMore paged={destinations} noun={["destination", "destinations"]} />
        </>
      )}
      {canWrite && (
        <CreateDestination
          workspaceId={workspace.id}
          onCreated={(destination) => {
            setCreated({ id: destination.id, secret: destination.secret });
            destinations.reload();
          }}
        />
      )}
    </>
  );
}

/** What a workspace without destinations is for, and how to make the first one. */
function EmptyWorkspace({
  workspace,
  canWrite,
}: {
  workspace: WorkspaceAccess;
  canWrite: boolean;
}) {
  if (useContext(SurfaceContext) === "portal") {
    return (
      <section class="empty-state" aria-labelledby="empty-heading">
        <h2 id="empty-heading">No destinations yet</h2>
        <p>
          A destination is an https:// endpoint of yours that receives this account&apos;s events,
          signed.
          {canWrite
            ? " Create the first one with the form below; its signing secret is shown once."
            : " Your access here is read-only."}
        </p>
        <p>
          Then follow what is sent under{" "}
          <a href={href({ page: "deliveries", workspace: workspace.id })}>Deliveries</a>.
        </p>
      </section>
    );
  }
  return (
    <section class="empty-state" aria-labelledby="empty-heading">
      <h2 id="empty-heading">No destinations yet</h2>
      <p>
        A destination is an https:// endpoint that receives this workspace&apos;s events, signed.
        {canWrite
          ? " Create the first one with the form below, or from the command line:"
          : " Someone with the webhooks:write scope can create one, from here or the command line:"}
      </p>
      <pre class="command">
        <code>{`svc webhooks create --workspace ${workspace.id} \\
  --url https://example.com/hooks --events '*' --output whsec.txt`}</code>
      </pre>
      <p>
        Then publish an event from your platform, and follow its deliveries under{" "}
        <a href={href({ page: "deliveries", workspace: workspace.id })}>Deliveries</a>.
      </p>
    </section>
  );
}
