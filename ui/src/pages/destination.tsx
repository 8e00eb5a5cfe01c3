import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { AttemptsChart } from "../components/chart.tsx";
import { CircuitAlert, CircuitState } from "../components/circuit.tsx";
import { DeliveryLog } from "../components/delivery-log.tsx";
import { HealthBadge } from "../components/health.tsx";
import { SendTestEvent } from "../components/send-test.tsx";
import { Time } from "../components/time.tsx";
import { rememberDestination } from "../destination-names.ts";
import { flash } from "../flash.ts";
import { formatRate, grants } from "../format.ts";
import { messageOf, useLoad } from "../hooks.ts";
import { href, type Filters } from "../routes.ts";
import type { DeliveryStats, DestinationWithCircuit, WorkspaceAccess } from "../types.ts";

const recoveryWindows = [
  { label: "the last hour", ms: 3_600_000 },
  { label: "the last 24 hours", ms: 86_400_000 },
  { label: "the last 7 days", ms: 7 * 86_400_000 },
];

/**
 * One destination: its settings and health, its chart, its delivery log (followed every few
 * seconds), and what the user's scopes allow: pause, delete, recover, retry.
 */
export function DestinationPage({
  workspace,
  id,
  filters,
}: {
  workspace: WorkspaceAccess;
  id: string;
  filters: Filters;
}) {
  const canWrite = grants(workspace.scopes, "webhooks:write");
  const canSend = grants(workspace.scopes, "events:write");
  const path = inWorkspace(workspace.id, `/webhooks/${encodeURIComponent(id)}`);
  const key = `${workspace.id}/${id}`;
  const destination = useLoad(
    async () => {
      const found = await api<DestinationWithCircuit>("GET", path);
      rememberDestination(workspace.id, found);
      return found;
    },
    key,
    5000,
  );
  const stats = useLoad(
    () =>
      api<DeliveryStats>(
        "GET",
        inWorkspace(workspace.id, `/delivery-stats?destination=${encodeURIComponent(id)}`),
      ),
    key,
    5000,
  );
  const [message, setMessage] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);

  const act = async (work: () => Promise<string>): Promise<void> => {
    try {
      setMessage(await work());
    } catch (failure) {
      setMessage(messageOf(failure));
    }
  };
  const setActive = (active: boolean) =>
    act(async () => {
      await api("PATCH", path, { active });
      destination.reload();
      return active ? "Resumed." : "Paused: it receives nothing until resumed.";
    });
  const remove = () =>
    act(async () => {
      await api("DELETE", path);
      flash(`Deleted ${destination.data?.url ?? id}.`);
      window.location.hash = href({ page: "destinations", workspace: workspace.id });
      return "Deleted.";
    });
  const recover = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const since = new Date(Date.now() - Number(form.get("window"))).toISOString();
    void act(async () => {
      const { queued } = await api<{ queued: number }>("POST", `${path}/recover`, { since });
      return `Recovery queued ${queued} failed ${queued === 1 ? "delivery" : "deliveries"}.`;
    });
  };

  if (destination.error !== null) {
    return (
      <p class="error" role="alert">
        {destination.error}
      </p>
    );
  }
  const current = destination.data;
  if (current === null) return <p>Loading…</p>;
  const health = stats.data?.destinations[0];

  return (
    <>
      <p class="back">
        <a href={href({ page: "destinations", workspace: workspace.id })}>← All destinations</a>
      </p>
      <h1 class="url">{current.url}</h1>
      <CircuitAlert circuit={current.circuit} />
      <dl class="facts">
        <dt>Id</dt>
        <dd>{current.id}</dd>
        <dt>State</dt>
        <dd>{current.active ? "Active" : "Paused"}</dd>
        <dt>Events</dt>
        <dd>{current.events.join(", ")}</dd>
        <dt>Circuit</dt>
        <dd data-testid="circuit">
          <CircuitState circuit={current.circuit} />
        </dd>
        <dt>Health</dt>
        <dd>
          <HealthBadge health={health} />
          {health !== undefined &&
            ` ${formatRate(health.success_rate)} of ${health.attempts} attempts in 24 h`}
        </dd>
        <dt>Last attempt</dt>
        <dd>
          <Time iso={health?.last_attempt_at ?? null} />
        </dd>
        <dt>Failing since</dt>
        <dd>
          <Time iso={health?.failing_since ?? null} />
        </dd>
      </dl>
      {(canWrite || canSend) && (
        <section class="controls" aria-label="Actions">
          {canWrite && (
            <button type="button" class="secondary" onClick={() => void setActive(!current.active)}>
              {current.active ? "Pause" : "Resume"}
            </button>
          )}
          {canWrite &&
            (confirmDelete ? (
              <>
                <button type="button" class="danger" onClick={() => void remove()}>
                  Delete for good
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => {
                    setConfirmDelete(false);
                  }}
                >
                  Keep it
                </button>
              </>
            ) : (
              <button
                type="button"
                class="danger"
                onClick={() => {
                  setConfirmDelete(true);
                }}
              >
                Delete
              </button>
            ))}
          {canSend && current.active && (
            <form class="recover" onSubmit={recover}>
              <label for="recover-window">Send again the failed deliveries of</label>
              <select id="recover-window" name="window">
                {recoveryWindows.map((each) => (
                  <option key={each.ms} value={each.ms}>
                    {each.label}
                  </option>
                ))}
              </select>
              <button type="submit">Recover</button>
            </form>
          )}
          {canSend && current.active && (
            <SendTestEvent
              workspaceId={workspace.id}
              destination={current}
              onSent={() => undefined}
            />
          )}
        </section>
      )}
      <p role="status" class="message">
        {message}
      </p>
      {stats.data !== null && <AttemptsChart stats={stats.data} label="This destination" />}
      <h2>Delivery log</h2>
      <DeliveryLog
        workspaceId={workspace.id}
        destinationId={id}
        filters={filters}
        onFilters={(next) => {
          window.location.hash = href({
            page: "destination",
            workspace: workspace.id,
            id,
            filters: next,
          });
        }}
        canRetry={canSend}
        columns={{ event: true, destination: false }}
        caption="Delivery log"
      />
    </>
  );
}
