-- A delivery's result rewrites its row on its own page (issue 32, decision 58): no index names
-- a column that a result ending the delivery changes, so that its UPDATE can be HOT.

-- Every failed delivery has its reason (the failed lists' indexes name it, not the status).
UPDATE deliveries SET failure_reason = 'retries_exhausted'
  WHERE status = 'failed' AND failure_reason IS NULL;

-- A claim's lease: one row per claim, so that a claimed delivery, which leaves the due index,
-- is due again when its lease runs out. `seqs` is a JSON array of the deliveries' seqs.
CREATE TABLE delivery_leases (
  lease TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL,
  seqs TEXT NOT NULL
);
CREATE INDEX delivery_leases_by_expiry ON delivery_leases (expires_at);

-- Deliveries claimed when this runs get the lease rows of their claims, so that a claim of
-- this release gives them back at their lease's end, and their worker can still report.
INSERT INTO delivery_leases (lease, expires_at, seqs)
  SELECT lease_owner, MAX(next_attempt_at), '[' || group_concat(seq, ',') || ']'
  FROM deliveries
  WHERE status = 'pending' AND lease_owner IS NOT NULL AND next_attempt_at IS NOT NULL
    AND listen_due_at IS NULL
  GROUP BY lease_owner;

-- The deliveries waiting for a worker: not the claimed ones, nor the ended ones (which keep
-- the lease and the time that their claim set). `lease_owner`, always NULL here, is in the
-- key so that SQLite counts the entries from the index alone (its predicate names it).
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, destination_id, lease_owner)
  WHERE lease_owner IS NULL AND next_attempt_at IS NOT NULL;

DROP INDEX deliveries_failed_by_destination;
DROP INDEX deliveries_failed_by_workspace;
CREATE INDEX deliveries_failed_by_destination ON deliveries (destination_id, created_at, seq)
  WHERE failure_reason IS NOT NULL;
CREATE INDEX deliveries_failed_by_workspace ON deliveries (workspace_id, created_at, seq)
  WHERE failure_reason IS NOT NULL;

DROP INDEX deliveries_listen_due;
CREATE INDEX deliveries_listen_due ON deliveries (destination_id, listen_due_at, seq)
  WHERE listen_due_at IS NOT NULL;

