/** A page of a list as every list operation answers it. */
export interface Page<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

/**
 * Every page of a list, first to last, following `next_cursor` (the client's async iteration
 * and the CLI's `--page-all` both read lists through this). A cursor the API gives twice
 * would loop for ever: `repeated()` makes the error thrown instead.
 */
export async function* pagesOf<P extends Page<unknown>>(
  fetchPage: (cursor: string | null) => Promise<P>,
  repeated: () => Error,
): AsyncGenerator<P, void, undefined> {
  const seen = new Set<string>();
  let cursor: string | null = null;
  do {
    const page: P = await fetchPage(cursor);
    yield page;
    cursor = page.next_cursor;
    if (cursor !== null && seen.has(cursor)) throw repeated();
    if (cursor !== null) seen.add(cursor);
  } while (cursor !== null);
}
