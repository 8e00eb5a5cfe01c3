import type { DestinationCircuit } from "../types.ts";
import { Time } from "./time.tsx";

/** A destination's circuit in words: closed, open until when and why, or probing. */
export function CircuitState({ circuit }: { circuit: DestinationCircuit }) {
  switch (circuit.state) {
    case "closed":
      return <span>Closed: deliveries go out as they are due</span>;
    case "half_open":
      return (
        <span>
          <span class="badge pending">Half-open</span> one delivery at a time probes the destination
          {circuit.reason !== null && <span class="reason">Opened because {circuit.reason}</span>}
        </span>
      );
    case "open":
      return (
        <span>
          <span class="badge failed">Open</span> nothing goes out until{" "}
          <Time iso={circuit.open_until} absoluteFirst />
          {circuit.reason !== null && <span class="reason">Opened because {circuit.reason}</span>}
        </span>
      );
  }
}

/**
 * A failing destination says so at the top of its page: deliveries are held, until when, why,
 * and what sends one at once.
 */
export function CircuitAlert({ circuit }: { circuit: DestinationCircuit }) {
  if (circuit.state !== "open") return null;
  return (
    <div class="alert" role="note" aria-label="Circuit open">
      <p>
        <strong>Deliveries to this destination are held:</strong> its circuit is open until{" "}
        <Time iso={circuit.open_until} absoluteFirst />
        {circuit.opens > 1 && ` (opened ${circuit.opens} times in a row)`}.
      </p>
      {circuit.reason !== null && <p>It opened because {circuit.reason}.</p>}
      <p>
        Fix the receiver, then Retry a delivery or Recover: the first goes out at once to probe it,
        and its success closes the circuit.
      </p>
    </div>
  );
}
