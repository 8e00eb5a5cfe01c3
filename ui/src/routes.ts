/**
 * Where the dashboard is, in the URL's fragment (`#/w/{workspace}/destinations/{id}`): the
 * server serves one page, and a reload or a shared link lands on the same view.
 */
export type Route =
  | { page: "destinations"; workspace: string }
  | { page: "destination"; workspace: string; id: string }
  | { page: "events"; workspace: string; type?: string }
  | { page: "event"; workspace: string; id: string }
  | { page: "home" };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const [w, workspace, page, id] = parts;
  if (w !== "w" || workspace === undefined || workspace === "") return { page: "home" };
  if (page === "destinations" && id !== undefined && id !== "") {
    return { page: "destination", workspace, id };
  }
  if (page === "events" && id !== undefined && id !== "") return { page: "event", workspace, id };
  if (page === "events") return { page: "events", workspace };
  return { page: "destinations", workspace };
}

export function href(route: Route): string {
  const enc = encodeURIComponent;
  switch (route.page) {
    case "home":
      return "#/";
    case "destinations":
      return `#/w/${enc(route.workspace)}/destinations`;
    case "destination":
      return `#/w/${enc(route.workspace)}/destinations/${enc(route.id)}`;
    case "events":
      return `#/w/${enc(route.workspace)}/events`;
    case "event":
      return `#/w/${enc(route.workspace)}/events/${enc(route.id)}`;
  }
}
