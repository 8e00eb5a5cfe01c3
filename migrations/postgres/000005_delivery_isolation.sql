-- Delivery isolation (issue 15): a circuit per destination, and a due index that can skip
-- the deliveries of destinations a worker excludes without reading their rows.

-- While `circuit_open_until` is set and in the future, the destination's deliveries are not
-- claimed; once it has passed, one attempt at a time probes the destination (half-open).
-- `circuit_opens` counts the openings in a row (it picks the cool-down from the retry
-- schedule); a delivered probe sets it back to 0. `circuit_error` is why it opened, in words.
ALTER TABLE destinations ADD COLUMN circuit_open_until BIGINT;
ALTER TABLE destinations ADD COLUMN circuit_opens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN circuit_error TEXT;

DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, destination_id) WHERE status = 'pending';

-- The earliest end of an open circuit, which a sleeping worker wakes for.
CREATE INDEX destinations_by_circuit ON destinations (circuit_open_until) WHERE circuit_open_until IS NOT NULL;
