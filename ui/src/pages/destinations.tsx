import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { AttemptsChart } from "../components/chart.tsx";
import { CreateDestination } from "../components/create-destination.tsx";
import { HealthCells } from "../components/health.tsx";
import { SecretPanel } from "../components/secret-panel.tsx";
import { grants } from "../format.ts";
import { useLoad } from "../hooks.ts";
import { href } from "../routes.ts";
import type { DeliveryStats, Destination, Page, WorkspaceAccess } from "../types.ts";

/** The workspace at a glance: its chart, its destinations with their health, a new one. */
export function DestinationsPage({ workspace }: { workspace: WorkspaceAccess }) {
  const canWrite = grants(workspace.scopes, "webhooks:write");
  const canReadLog = grants(workspace.scopes, "events:read");
  const destinations = useLoad(
    () => api<Page<Destination>>("GET", inWorkspace(workspace.id, "/webhooks?limit=100")),
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
  const health = new Map(
    (stats.data?.destinations ?? []).map((each) => [each.destination_id, each]),
  );

  return (
    <>
      <h1>Destinations</h1>
      {stats.data != null && <AttemptsChart stats={stats.data} label="This workspace" />}
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
      {destinations.data !== null && destinations.data.data.length === 0 && (
        <p>No destinations yet.</p>
      )}
      {destinations.data !== null && destinations.data.data.length > 0 && (
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
            {destinations.data.data.map((destination) => (
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
