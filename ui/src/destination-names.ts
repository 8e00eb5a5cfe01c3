import { useEffect, useState } from "preact/hooks";
import { api, ApiError, inWorkspace } from "./api.ts";
import type { Destination } from "./types.ts";

/** What a person reads for a destination: its URL, or why there is none. */
export type DestinationName =
  { kind: "url"; url: string } | { kind: "listen" } | { kind: "deleted" } | { kind: "unknown" };

/**
 * Destinations' URLs by id, read once per page load (`GET …/webhooks/{id}`) and shared by every
 * list that names them: an event's deliveries, the workspace's delivery log. A URL changes
 * rarely; a page reload reads it again.
 */
const known = new Map<string, Promise<DestinationName>>();

function nameOf(workspaceId: string, id: string): Promise<DestinationName> {
  // A `svc listen` session is not a destination: it has no URL and no page here.
  if (id.startsWith("lsn_")) return Promise.resolve({ kind: "listen" });
  const key = `${workspaceId}/${id}`;
  let found = known.get(key);
  if (found === undefined) {
    found = api<Destination>("GET", inWorkspace(workspaceId, `/webhooks/${encodeURIComponent(id)}`))
      .then((destination): DestinationName => ({ kind: "url", url: destination.url }))
      .catch((failure: unknown): DestinationName => {
        if (failure instanceof ApiError && failure.status === 404) return { kind: "deleted" };
        known.delete(key); // read again next time: it may have been a passing failure
        return { kind: "unknown" };
      });
    known.set(key, found);
  }
  return found;
}

/** Remembers a destination's URL already read (a list of destinations, a destination's page). */
export function rememberDestination(workspaceId: string, destination: Destination): void {
  known.set(
    `${workspaceId}/${destination.id}`,
    Promise.resolve({ kind: "url", url: destination.url }),
  );
}

/** The names of `ids`, filled in as they are read. */
export function useDestinationNames(
  workspaceId: string,
  ids: readonly string[],
): ReadonlyMap<string, DestinationName> {
  const [names, setNames] = useState<ReadonlyMap<string, DestinationName>>(new Map());
  const wanted = [...new Set(ids)].sort().join(" ");
  useEffect(() => {
    let current = true;
    const list = wanted === "" ? [] : wanted.split(" ");
    void Promise.all(list.map(async (id) => [id, await nameOf(workspaceId, id)] as const)).then(
      (pairs) => {
        if (current) setNames(new Map(pairs));
      },
    );
    return () => {
      current = false;
    };
  }, [workspaceId, wanted]);
  return names;
}
