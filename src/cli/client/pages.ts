import { pagesOf } from "../../client/pages.ts";
import { AppError } from "../../errors.ts";
import { arrayOf, isString, nullable, objectOf, type AnswerShape } from "./answer-shape.ts";
import { checkedBody } from "./api-paths.ts";
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

/** A page of a list of `item`s: the contract's `pageOf` (src/contract/common.ts). */
export function pageShape<T>(
  item: AnswerShape<T>,
): AnswerShape<{ data: T[]; next_cursor: string | null }> {
  return {
    accepts: objectOf({ data: arrayOf(item.accepts), next_cursor: nullable(isString) }),
    schema: async () => (await import("../../contract/common.ts")).pageOf(await item.schema()),
  };
}

/**
 * Reads one page of a list, or with `pageAll` every page, following `next_cursor`; a cursor
 * the API gives twice would loop for ever, so it stops with `bad_response`.
 */
export async function readPages<T>(
  session: ApiClient,
  item: AnswerShape<T>,
  request: (cursor: string | null) => ApiRequest,
  pageAll: boolean,
): Promise<ListedPages<T>> {
  const page = pageShape(item);
  const items: T[] = [];
  const bodies: string[] = [];
  let nextCursor: string | null = null;
  // The client's paging (src/client/pages.ts): its cursor-following and its guard.
  const pages = pagesOf(
    async (cursor) => {
      const response = await session.send(request(cursor));
      bodies.push(response.text);
      return checkedBody(page, response);
    },
    () => new AppError("bad_response", "The API repeated a pagination cursor; stopping."),
  );
  for await (const page of pages) {
    items.push(...page.data);
    nextCursor = page.next_cursor;
    if (!pageAll) break;
  }
  return { items, bodies, nextCursor };
}

/** What `--dry-run --page-all` adds to the request it shows. */
export const PAGE_ALL_DRY_RUN_NOTE =
  "With --page-all, each further page would be asked for with the previous page's next_cursor.";
