import type { DeliveryStats } from "../types.ts";

const width = 480;
const height = 120;

/**
 * Attempts per hour over the last 24 hours, succeeded stacked under failed: an SVG drawn from
 * numbers only (no tenant string reaches it), with its totals in words for screen readers.
 */
export function AttemptsChart({ stats, label }: { stats: DeliveryStats; label: string }) {
  const { buckets } = stats;
  const most = Math.max(1, ...buckets.map((bucket) => bucket.succeeded + bucket.failed));
  const slot = width / Math.max(1, buckets.length);
  const succeeded = buckets.reduce((sum, bucket) => sum + bucket.succeeded, 0);
  const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0);
  const summary = `${label}: ${attempts(succeeded)} succeeded and ${failed} failed in the last 24 hours.`;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={summary}
        preserveAspectRatio="none"
      >
        {buckets.map((bucket, index) => {
          const okHeight = (bucket.succeeded / most) * height;
          const failedHeight = (bucket.failed / most) * height;
          const x = index * slot + 1;
          const barWidth = Math.max(1, slot - 2);
          return (
            <g key={bucket.start}>
              <title>{`${new Date(bucket.start).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })}: ${bucket.succeeded} succeeded, ${bucket.failed} failed`}</title>
              <rect class="ok" x={x} y={height - okHeight} width={barWidth} height={okHeight} />
              <rect
                class="failed"
                x={x}
                y={height - okHeight - failedHeight}
                width={barWidth}
                height={failedHeight}
              />
            </g>
          );
        })}
      </svg>
      <div class="axis" aria-hidden="true">
        <span>24 hours ago</span>
        {succeeded + failed === 0 && <span>No attempts</span>}
        <span>now</span>
      </div>
      <figcaption>
        <span class="legend ok">{succeeded} succeeded</span>{" "}
        <span class="legend failed">{failed} failed</span> — attempts per hour, last 24 hours
      </figcaption>
    </figure>
  );
}

function attempts(count: number): string {
  return `${count} ${count === 1 ? "attempt" : "attempts"}`;
}
