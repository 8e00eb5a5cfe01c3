import { DeliveryLog } from "../components/delivery-log.tsx";
import { grants } from "../format.ts";
import { href, type Filters } from "../routes.ts";
import type { WorkspaceAccess } from "../types.ts";

/** Every delivery of the workspace, to any destination, newest first, filtered as the URL says. */
export function DeliveriesPage({
  workspace,
  filters,
}: {
  workspace: WorkspaceAccess;
  filters: Filters;
}) {
  return (
    <>
      <h1>Deliveries</h1>
      <p class="lead">
        Each event to each destination: where it stands, its attempts, and when the next one goes
        out.
      </p>
      <DeliveryLog
        workspaceId={workspace.id}
        filters={filters}
        onFilters={(next) => {
          window.location.hash = href({
            page: "deliveries",
            workspace: workspace.id,
            filters: next,
          });
        }}
        canRetry={grants(workspace.scopes, "events:write")}
        columns={{ event: true, destination: true }}
        caption="Delivery log"
      />
    </>
  );
}
