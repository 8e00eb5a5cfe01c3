import { useState } from "preact/hooks";
import { api, inWorkspace } from "../api.ts";
import { fieldOf } from "../format.ts";
import { messageOf } from "../hooks.ts";
import { href } from "../routes.ts";
import { EVENT_TYPES, type Destination, type EventSummary } from "../types.ts";

/**
 * "Send test event": an event of a type the destination subscribes to, published to it alone
 * (`destination` in the publish body), through the outbox and signed as any notification. It
 * shows in the log below as a test (the delivery's `test`).
 */
export function SendTestEvent({
  workspaceId,
  destination,
  onSent,
}: {
  workspaceId: string;
  destination: Destination;
  onSent: () => void;
}) {
  const [message, setMessage] = useState<{ text: string; eventId?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const types = destination.events.includes("*")
    ? EVENT_TYPES
    : EVENT_TYPES.filter((type) => destination.events.includes(type));

  const send = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const type = fieldOf(new FormData(event.currentTarget as HTMLFormElement), "type");
    setBusy(true);
    try {
      const sent = await api<EventSummary>("POST", inWorkspace(workspaceId, "/events"), {
        type,
        data: { object: { id: "test", message: "A test event sent from the svc dashboard." } },
        destination: destination.id,
      });
      setMessage({ text: "Test event sent:", eventId: sent.id });
      onSent();
    } catch (failure) {
      setMessage({ text: `Not sent: ${messageOf(failure)}` });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="send-test" onSubmit={(event) => void send(event)}>
      <label for="test-type">Test event of type</label>
      <select id="test-type" name="type">
        {(types.length === 0 ? EVENT_TYPES : types).map((type) => (
          <option key={type} value={type}>
            {type}
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy}>
        Send test event
      </button>
      <span role="status" class="row-message">
        {message?.text}{" "}
        {message?.eventId !== undefined && (
          <a href={href({ page: "event", workspace: workspaceId, id: message.eventId })}>
            {message.eventId}
          </a>
        )}
      </span>
    </form>
  );
}
