import { plural } from "../format.ts";
import type { Paged } from "../paging.ts";

/** How many of a list are shown, and "Load more" while the API holds more. */
export function LoadMore<T>({
  paged,
  noun,
}: {
  paged: Paged<T>;
  /** The item's name, one and many. */
  noun: readonly [string, string];
}) {
  const shown = paged.items?.length ?? 0;
  return (
    <div class="load-more">
      <p class="count" aria-live="polite">
        {paged.more
          ? `${plural(shown, ...noun)} shown, more to load`
          : `${shown === 1 ? "" : "All "}${plural(shown, ...noun)} shown`}
      </p>
      {paged.more && (
        <button
          type="button"
          class="secondary"
          disabled={paged.loading}
          onClick={() => {
            paged.loadMore();
          }}
        >
          {paged.loading ? "Loading…" : "Load more"}
        </button>
      )}
    </div>
  );
}
