import type { z } from "zod";
import { pageOf } from "../../contract/common.ts";
import { AppError } from "../../errors.ts";
import { parseBody } from "./api-paths.ts";
import type { ApiRequest } from "./http.ts";
import type { ApiClient } from "./session.ts";

/** --page-all asks for the API's largest page: the fewest round trips. */
export const PAGE_ALL_LIMIT = "100";

/** What a list command read: the items of every page it asked for, and each body as received. */
export interface ListedPages<T> {
  readonly items: T[];
  /** One per page, for `--raw`. */
  readonly bodies: string[];
  /** Non-null when more pages exist than were read (no --page-all). */
  readonly nextCursor: string | null;
}

/**
 * The query of one page of a list: `filters` always, and with `--page-all` the largest page
 * and the cursor of the page before.
 */
export function pageQuery(
  filters: Readonly<Record<string, string>>,
  pageAll: boolean,
  cursor: string | null,
): Record<string, string> {
  if (!pageAll) return { ...filters };
  return { ...filters, limit: PAGE_ALL_LIMIT, ...(cursor === null ? {} : { cursor }) };
}

/**
 * Reads one page of a list, or with `pageAll` every page, following `next_cursor`; a cursor
 * the API gives twice would loop for ever, so it stops with `bad_response`.
 */
export async function readPages<T extends z.ZodType>(
  session: ApiClient,
  item: T,
  request: (cursor: string | null) => ApiRequest,
  pageAll: boolean,
): Promise<ListedPages<z.output<T>>> {
  const schema = pageOf(item);
  const items: z.output<T>[] = [];
  const bodies: string[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  do {
    const response = await session.send(request(cursor));
    const page = parseBody(schema, response);
    items.push(...page.data);
    bodies.push(response.text);
    cursor = page.next_cursor;
    if (cursor !== null && cursors.has(cursor)) {
      throw new AppError("bad_response", "The API repeated a pagination cursor; stopping.");
    }
    if (cursor !== null) cursors.add(cursor);
  } while (pageAll && cursor !== null);
  return { items, bodies, nextCursor: cursor };
}

/** What `--dry-run --page-all` adds to the request it shows. */
export const PAGE_ALL_DRY_RUN_NOTE =
  "With --page-all, each further page would be asked for with the previous page's next_cursor.";
