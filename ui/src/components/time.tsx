import { formatRelative, formatTime } from "../format.ts";

/**
 * A time said relative to now ("5 minutes ago"), with the absolute time in the `title` (on
 * hover) and, for keyboards, shown beside it while it has focus (a title alone never shows on
 * focus). The ISO form stays in `datetime`.
 */
export function Time({
  iso,
  fallback = "—",
  absoluteFirst = false,
}: {
  iso: string | null;
  fallback?: string;
  /** "Nov 25, 2026, 1:14:22 PM (in 59 minutes)", where a sentence needs a time, not a span. */
  absoluteFirst?: boolean;
}) {
  if (iso === null) return <span>{fallback}</span>;
  const absolute = formatTime(iso);
  if (absoluteFirst) {
    return (
      <time dateTime={iso}>
        {absolute} ({formatRelative(iso)})
      </time>
    );
  }
  return (
    <time class="relative" dateTime={iso} title={absolute} data-absolute={absolute} tabIndex={0}>
      {formatRelative(iso)}
    </time>
  );
}
