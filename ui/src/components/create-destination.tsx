import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { fieldOf } from "../format.ts";
import { messageOf } from "../hooks.ts";
import { EVENT_SUBSCRIPTIONS, type CreatedDestination } from "../types.ts";

/** A new destination: its https:// URL and the event types it subscribes to. */
export function CreateDestination({
  workspaceId,
  onCreated,
}: {
  workspaceId: string;
  onCreated: (created: CreatedDestination) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const events = form.getAll("events").map(String);
    setBusy(true);
    setError(null);
    try {
      const created = await api<CreatedDestination>("POST", inWorkspace(workspaceId, "/webhooks"), {
        url: fieldOf(form, "url"),
        events: events.length === 0 ? ["*"] : events,
      });
      formElement.reset();
      onCreated(created);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="create" onSubmit={(event) => void submit(event)} aria-labelledby="create-heading">
      <h2 id="create-heading">New destination</h2>
      <label for="new-url">URL</label>
      <input
        id="new-url"
        name="url"
        type="url"
        required
        placeholder="https://example.com/hooks"
        aria-describedby="new-url-help"
      />
      <p id="new-url-help" class="help">
        An https:// address that receives the workspace&apos;s events.
      </p>
      <fieldset>
        <legend>Events</legend>
        {EVENT_SUBSCRIPTIONS.map((name) => (
          <label key={name} class="check">
            <input type="checkbox" name="events" value={name} defaultChecked={name === "*"} />
            {name === "*" ? "All events (*)" : name}
          </label>
        ))}
      </fieldset>
      {error !== null && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        Create destination
      </button>
    </form>
  );
}
