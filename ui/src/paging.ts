import { useEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "./hooks.ts";
import type { Page } from "./types.ts";

export interface Paged<T> {
  /** Every item loaded so far, newest first. */
  items: T[] | null;
  /** Whether the API holds more after the last item loaded. */
  more: boolean;
  loading: boolean;
  error: string | null;
  loadMore: () => void;
  reload: () => void;
}

/**
 * A list the API pages with a cursor, newest first: the first page when `key` changes, the
 * next with `loadMore` ("Load more"), until the API says there is no more. Every `refreshMs`
 * the first page is read again and merged in front: a list only grows at its head (new items
 * are the newest), so the items loaded before that are older than the first page stay, in
 * their order, and the cursor of the last page loaded still continues after them.
 */
export function usePaged<T>(
  loadPage: (cursor: string | null) => Promise<Page<T>>,
  idOf: (item: T) => string,
  timeOf: (item: T) => number,
  key: string,
  refreshMs?: number,
): Paged<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The key of the list the state belongs to: an answer for another key is dropped.
  const current = useRef(key);
  current.current = key;
  const load = useRef(loadPage);
  load.current = loadPage;

  // Whether the next head read is the list's first (which also sets the cursor).
  const first = useRef(true);
  const readHead = (): void => {
    const forKey = key;
    load.current(null).then(
      (page) => {
        if (current.current !== forKey) return;
        setError(null);
        if (first.current) {
          first.current = false;
          setCursor(page.next_cursor);
          setItems(page.data);
          return;
        }
        setItems((before) => mergeHead(page, before ?? [], idOf, timeOf));
      },
      (failure: unknown) => {
        if (current.current === forKey) setError(messageOf(failure));
      },
    );
  };

  useEffect(() => {
    setItems(null);
    setCursor(null);
    setError(null);
    first.current = true;
    readHead();
    if (refreshMs === undefined) return undefined;
    const timer = setInterval(readHead, refreshMs);
    return () => {
      clearInterval(timer);
    };
  }, [key, refreshMs]);

  const loadMore = (): void => {
    if (cursor === null || loading) return;
    const forKey = key;
    setLoading(true);
    load.current(cursor).then(
      (page) => {
        if (current.current !== forKey) return;
        setLoading(false);
        setCursor(page.next_cursor);
        setItems((before) => {
          const known = new Set((before ?? []).map(idOf));
          return [...(before ?? []), ...page.data.filter((item) => !known.has(idOf(item)))];
        });
      },
      (failure: unknown) => {
        if (current.current !== forKey) return;
        setLoading(false);
        setError(messageOf(failure));
      },
    );
  };

  return { items, more: cursor !== null, loading, error, loadMore, reload: readHead };
}

/**
 * The first page read again, in front of the items loaded before that are not newer than its
 * oldest: one newer that is missing from it has left the list (a status filter), and goes;
 * one of the same time stays (the page may have ended amid a millisecond). A first page
 * without a cursor is the whole list.
 */
function mergeHead<T>(
  page: Page<T>,
  before: readonly T[],
  idOf: (item: T) => string,
  timeOf: (item: T) => number,
): T[] {
  const oldest = page.data.at(-1);
  if (page.next_cursor === null || oldest === undefined) return page.data;
  const fresh = new Set(page.data.map(idOf));
  const after = timeOf(oldest);
  return [
    ...page.data,
    ...before.filter((item) => !fresh.has(idOf(item)) && timeOf(item) <= after),
  ];
}
