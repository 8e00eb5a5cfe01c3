-- A delivery's result rewrites its row on its own page (issue 32, decision 58): no index names
-- a column that a result ending the delivery changes, so that its UPDATE can be HOT.

-- No process writes deliveries until this commits: a claim of the older release committed
-- between the lease rows below and the trigger at the end would have neither.
LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;

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
  SELECT lease_owner, MAX(next_attempt_at), '[' || string_agg(CAST(seq AS TEXT), ',') || ']'
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

-- Room on each page for a row's next version, so that the result's update stays on it. Pages
-- filled from now on keep it; existing ones are not rewritten.
ALTER TABLE deliveries SET (fillfactor = 50);

-- During a rolling upgrade, a process of the older release still claims the old way: it sets
-- `lease_owner` and writes no lease row, and the deliveries it holds when it stops would never
-- be due again. Each of its claims (a token ending in ':' and 16 hex digits; ours have 20) gets
-- a lease row here, so that a claim of this release gives them back at the lease's end. Rows of
-- this release pass the WHEN test and call nothing. A later release drops this trigger.
-- (The migration runner splits at a ';' that ends a line: none does inside the body.)
CREATE FUNCTION deliveries_lease_of_older_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO delivery_leases (lease, expires_at, seqs)
  VALUES (NEW.lease_owner, NEW.next_attempt_at, '[' || NEW.seq || ']')
  ON CONFLICT (lease) DO UPDATE
    SET seqs = left(delivery_leases.seqs, -1) || ',' || NEW.seq || ']',
        expires_at = GREATEST(delivery_leases.expires_at, EXCLUDED.expires_at); RETURN NULL; END
$$;
CREATE TRIGGER deliveries_lease_of_older_release
  AFTER INSERT OR UPDATE OF lease_owner ON deliveries
  FOR EACH ROW
  WHEN (NEW.lease_owner IS NOT NULL AND NEW.status = 'pending' AND NEW.listen_due_at IS NULL
        AND NEW.next_attempt_at IS NOT NULL
        AND substr(NEW.lease_owner, length(NEW.lease_owner) - 16, 1) = ':')
  EXECUTE FUNCTION deliveries_lease_of_older_release();
