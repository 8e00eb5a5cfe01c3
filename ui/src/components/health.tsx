import { formatRate, formatTime } from "../format.ts";
import type { DestinationHealth } from "../types.ts";

/** A destination's health in words: never by colour alone. */
export function HealthBadge({ health }: { health: DestinationHealth | undefined }) {
  if (health === undefined) return <span class="badge idle">No attempts in 24 h</span>;
  if (health.failing_since !== null) return <span class="badge failing">Failing</span>;
  return <span class="badge healthy">Healthy</span>;
}

export function HealthCells({ health }: { health: DestinationHealth | undefined }) {
  return (
    <>
      <td data-label="Health">
        <HealthBadge health={health} />
      </td>
      <td data-label="Success (24 h)">
        {health === undefined ? "—" : `${formatRate(health.success_rate)} of ${health.attempts}`}
      </td>
      <td data-label="Last attempt">
        {health === undefined ? "—" : formatTime(health.last_attempt_at)}
        {health?.last_status_code != null && ` (${health.last_status_code})`}
      </td>
      <td data-label="Failing since">{formatTime(health?.failing_since ?? null)}</td>
    </>
  );
}
