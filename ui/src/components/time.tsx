import { formatRelative, formatTime } from "../format.ts";

/**
 * A time said relative to now ("5 minutes ago"), with the absolute time in the `title` (on
 * hover) and, for keyboards, shown beside it while it has focus (a title alone never shows on
 * focus). The ISO form stays in `datetime`.
 */
export function Time({ iso, fallback = "—" }: { iso: string | null; fallback?: string }) {
  if (iso === null) return <span>{fallback}</span>;
  const absolute = formatTime(iso);
  return (
    <time class="relative" dateTime={iso} title={absolute} data-absolute={absolute} tabIndex={0}>
      {formatRelative(iso)}
    </time>
  );
}
