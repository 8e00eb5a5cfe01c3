/**
 * Where the dashboard is, in the URL's fragment (`#/w/{workspace}/destinations/{id}?status=…`):
 * the server serves one page, and a reload or a shared link lands on the same view, with the
 * same filters (the query after `?`).
 */
export type Route =
  | { page: "destinations"; workspace: string }
  | { page: "destination"; workspace: string; id: string; filters?: Filters }
  | { page: "events"; workspace: string; filters?: Filters }
  | { page: "event"; workspace: string; id: string }
  | { page: "deliveries"; workspace: string; filters?: Filters }
  | { page: "delivery"; workspace: string; id: string }
  | { page: "home" };

/** A log's filters as the URL keeps them: `status`, `type`, and a time range. */
export interface Filters {
  status?: string;
  type?: string;
  /** A range back from now (`1h`, `24h`, `7d`), which stays relative when the link is shared. */
  range?: string;
  /** Or absolute bounds, ISO 8601. */
  since?: string;
  until?: string;
}

const filterNames = ["status", "type", "range", "since", "until"] as const;

export function parseRoute(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const parts = path.split("/").map(decodeURIComponent);
  const [w, workspace, page, id] = parts;
  if (w !== "w" || workspace === undefined || workspace === "") return { page: "home" };
  const filters = parseFilters(search);
  const hasId = id !== undefined && id !== "";
  switch (page) {
    case "destinations":
      return hasId ? { page: "destination", workspace, id, filters } : { page: page, workspace };
    case "events":
      return hasId ? { page: "event", workspace, id } : { page: "events", workspace, filters };
    case "deliveries":
      return hasId
        ? { page: "delivery", workspace, id }
        : { page: "deliveries", workspace, filters };
    case undefined:
    default:
      return { page: "destinations", workspace };
  }
}

function parseFilters(search: string): Filters {
  const params = new URLSearchParams(search);
  const filters: Filters = {};
  for (const name of filterNames) {
    const value = params.get(name);
    if (value !== null && value !== "") filters[name] = value;
  }
  return filters;
}

export function href(route: Route): string {
  const enc = encodeURIComponent;
  switch (route.page) {
    case "home":
      return "#/";
    case "destinations":
      return `#/w/${enc(route.workspace)}/destinations`;
    case "destination":
      return `#/w/${enc(route.workspace)}/destinations/${enc(route.id)}${search(route.filters)}`;
    case "events":
      return `#/w/${enc(route.workspace)}/events${search(route.filters)}`;
    case "event":
      return `#/w/${enc(route.workspace)}/events/${enc(route.id)}`;
    case "deliveries":
      return `#/w/${enc(route.workspace)}/deliveries${search(route.filters)}`;
    case "delivery":
      return `#/w/${enc(route.workspace)}/deliveries/${enc(route.id)}`;
  }
}

function search(filters: Filters | undefined): string {
  if (filters === undefined) return "";
  const params = new URLSearchParams();
  for (const name of filterNames) {
    const value = filters[name];
    if (value !== undefined && value !== "") params.set(name, value);
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** The ranges back from now a filter offers, and how long each is. */
export const RANGES: readonly { value: string; label: string; ms: number }[] = [
  { value: "1h", label: "Last hour", ms: 3_600_000 },
  { value: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
];

/** The API's `since`/`until` of a log's filters, at `now`. */
export function timeBounds(filters: Filters, now: number): { since?: string; until?: string } {
  const range = RANGES.find((each) => each.value === filters.range);
  if (range !== undefined) return { since: new Date(now - range.ms).toISOString() };
  return {
    ...(filters.since === undefined ? {} : { since: filters.since }),
    ...(filters.until === undefined ? {} : { until: filters.until }),
  };
}
