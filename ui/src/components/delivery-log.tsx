import { api, inWorkspace, query } from "../api.ts";
import { usePaged } from "../paging.ts";
import { timeBounds, type Filters } from "../routes.ts";
import type { Delivery, Page } from "../types.ts";
import { DeliveryTable, type LogColumns } from "./delivery-table.tsx";
import { LogFilters } from "./log-filters.tsx";
import { LoadMore } from "./load-more.tsx";

/** Deliveries a page: the API's most, so that 200 are four pages. */
const pageSize = "100";

/**
 * A delivery log that is a working tool: filters kept in the URL, the deliveries the API holds
 * a page at a time ("Load more"), the newest page followed every 2 s.
 */
export function DeliveryLog({
  workspaceId,
  destinationId,
  filters,
  onFilters,
  canRetry,
  columns,
  caption,
}: {
  workspaceId: string;
  destinationId?: string;
  filters: Filters;
  onFilters: (filters: Filters) => void;
  canRetry: boolean;
  columns: LogColumns;
  caption: string;
}) {
  const key = JSON.stringify([workspaceId, destinationId, filters]);
  const log = usePaged(
    (cursor) =>
      api<Page<Delivery>>(
        "GET",
        inWorkspace(
          workspaceId,
          `/deliveries${query({
            limit: pageSize,
            destination: destinationId,
            status: filters.status,
            type: filters.type,
            ...timeBounds(filters, Date.now()),
            cursor: cursor ?? undefined,
          })}`,
        ),
      ),
    (delivery) => delivery.id,
    (delivery) => Date.parse(delivery.created_at),
    key,
    2000,
  );
  const filtered = Object.keys(filters).length > 0;

  return (
    <section class="log-section" aria-label={caption}>
      <LogFilters
        filters={filters}
        onChange={onFilters}
        status={true}
        label={`Filter the ${caption.toLowerCase()}`}
      />
      {log.error !== null && (
        <p class="error" role="alert">
          {log.error}
        </p>
      )}
      {log.items !== null && log.items.length === 0 && (
        <p class="empty">
          {filtered ? "No deliveries match these filters." : "No deliveries yet."}
        </p>
      )}
      {log.items !== null && log.items.length > 0 && (
        <>
          <DeliveryTable
            workspaceId={workspaceId}
            deliveries={log.items}
            canRetry={canRetry}
            onChanged={log.reload}
            columns={columns}
            caption={caption}
          />
          <LoadMore paged={log} noun={["delivery", "deliveries"]} />
        </>
      )}
    </section>
  );
}
