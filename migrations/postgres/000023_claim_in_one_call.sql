-- A worker's claim in one call, one round trip (issue 32, decision 66): the leases that ran out
-- given back (decision 58), the oldest due deliveries read and locked SKIP LOCKED, picked within
-- the claimer's room (decision 24), leased, and read back with their events and destinations.
-- A claim had made four round trips, and one that found nothing three; with several workers
-- most claims find nothing, since every NOTIFY wakes every worker.
--
-- The function's own setting keeps every plan made inside it off sequential scans, as a
-- claim's transaction did with SET LOCAL (decision 56): PL/pgSQL keeps a connection's plans,
-- and one made while the table was small would otherwise scan it whole for as long as the
-- connection lives.
--
-- The pick is the store's (pickWithinRoom): in the candidates' order (due time, destination,
-- seq), a delivery is taken while its destination has room (one at a time while the circuit is
-- half-open) and its workspace has room, up to p_total. As a destination belongs to one
-- workspace, that is: the first p_room of each destination, then of those the first room of
-- each workspace, then the first p_total. Kept in step with deliveries.ts (pickWithinRoom,
-- claimableWhere, ranOutLeasesPerClaim).
--
-- Processes of this release call it by name on every connection: a later release changes it
-- under a new name, and drops this one only once no process of this release is left.
CREATE FUNCTION svc_claim_deliveries(
  p_now BIGINT,
  p_lease_end BIGINT,
  p_lease TEXT,
  p_excluded_destinations TEXT,
  p_excluded_workspaces TEXT,
  p_window INTEGER,
  p_total INTEGER,
  p_per_destination INTEGER,
  p_destination_room TEXT,
  p_per_workspace INTEGER,
  p_workspace_room TEXT
) RETURNS TABLE (
  seq BIGINT,
  event_id TEXT,
  event_type TEXT,
  attempts INTEGER,
  retry_base INTEGER,
  body TEXT,
  traceparent TEXT,
  destination_id TEXT,
  url TEXT,
  active BOOLEAN,
  deleted_at BIGINT,
  secret_ciphertext TEXT,
  workspace_id TEXT,
  circuit_opens INTEGER
) LANGUAGE plpgsql SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  -- Parsed once a call: in a generic plan a cast of the parameter would be made for each row.
  destination_room JSONB := CAST(p_destination_room AS JSONB);
  workspace_room JSONB := CAST(p_workspace_room AS JSONB);
BEGIN
  WITH ran_out AS (
         DELETE FROM delivery_leases WHERE lease IN
           (SELECT l.lease FROM delivery_leases l WHERE l.expires_at <= p_now
            ORDER BY l.expires_at LIMIT 64 FOR UPDATE OF l SKIP LOCKED)
         RETURNING lease, seqs),
       given AS (
         SELECT r.lease, CAST(s.value AS BIGINT) AS seq
         FROM ran_out r, jsonb_array_elements_text(CAST(r.seqs AS JSONB)) s)
  UPDATE deliveries SET lease_owner = NULL FROM given g
  WHERE deliveries.seq = ANY (ARRAY(SELECT seq FROM given)) AND deliveries.seq = g.seq
    AND deliveries.lease_owner = g.lease AND deliveries.status = 'pending';

  RETURN QUERY
  WITH c AS (
         SELECT dl.seq, dl.next_attempt_at, dl.destination_id, d.workspace_id, d.circuit_opens
         FROM deliveries dl JOIN destinations d ON d.id = dl.destination_id
         WHERE dl.lease_owner IS NULL AND dl.next_attempt_at IS NOT NULL
           AND dl.next_attempt_at <= p_now
           AND dl.destination_id NOT IN
             (SELECT jsonb_array_elements_text(CAST(p_excluded_destinations AS JSONB)))
           AND d.workspace_id NOT IN
             (SELECT jsonb_array_elements_text(CAST(p_excluded_workspaces AS JSONB)))
           AND (d.circuit_open_until IS NULL OR d.circuit_open_until <= p_now)
         ORDER BY dl.next_attempt_at LIMIT p_window
         FOR UPDATE OF dl SKIP LOCKED),
       in_destination AS (
         SELECT c.*,
                ROW_NUMBER() OVER (PARTITION BY c.destination_id
                                   ORDER BY c.next_attempt_at, c.seq) AS n,
                COALESCE(CAST(destination_room ->> c.destination_id AS INTEGER),
                         p_per_destination) AS room
         FROM c),
       in_workspace AS (
         SELECT i.*,
                ROW_NUMBER() OVER (PARTITION BY i.workspace_id
                                   ORDER BY i.next_attempt_at, i.destination_id, i.seq) AS m
         FROM in_destination i
         WHERE i.n <= CASE WHEN i.circuit_opens > 0 THEN LEAST(i.room, 1) ELSE i.room END),
       picked AS (
         SELECT w.seq, w.next_attempt_at, w.destination_id FROM in_workspace w
         WHERE w.m <= COALESCE(CAST(workspace_room ->> w.workspace_id AS INTEGER),
                               p_per_workspace)
         ORDER BY w.next_attempt_at, w.destination_id, w.seq LIMIT p_total),
       leased AS (
         INSERT INTO delivery_leases (lease, expires_at, seqs)
         SELECT p_lease, p_lease_end,
                CAST(json_agg(p.seq ORDER BY p.next_attempt_at, p.destination_id, p.seq) AS TEXT)
         FROM picked p HAVING COUNT(*) > 0),
       u AS (
         UPDATE deliveries SET next_attempt_at = p_lease_end, lease_owner = p_lease
         WHERE deliveries.seq = ANY (ARRAY(SELECT seq FROM picked))
         RETURNING deliveries.seq, deliveries.event_id, deliveries.event_type,
                   deliveries.attempts, deliveries.retry_base, deliveries.destination_id)
  SELECT u.seq, u.event_id, u.event_type, u.attempts, u.retry_base, e.body, e.traceparent,
         d.id, d.url, d.active, d.deleted_at, d.secret_ciphertext, d.workspace_id,
         d.circuit_opens
  FROM u
  JOIN events e ON e.id = u.event_id
  JOIN destinations d ON d.id = u.destination_id
  ORDER BY u.seq;
END
$$;
