-- What a delivery costs PostgreSQL (issue 32, decision 49). Three foreign keys whose rows the
-- write paths already tie together were checked by a trigger per row written: each check a
-- query, and a row lock (WAL, a dirtied page, a MultiXact when concurrent publishes lock the
-- same destination) on the row referred to.
--
-- - An attempt is inserted only by the statement that records it, which has just updated its
--   delivery under the claim's lease; the deletions (retention, a workspace's) delete the
--   attempts before their deliveries.
-- - A delivery is inserted only with its event, in the same statement or transaction
--   (publish, a test event), and the deletions delete deliveries before events.
-- - A delivery is inserted only for a destination of its event's workspace, found in the
--   same statement. Destinations are deleted only with their workspace, whose deletion holds
--   the workspace's row (FOR UPDATE) while a concurrent publish waits on events'
--   workspace_id key (kept) and then fails.
ALTER TABLE delivery_attempts DROP CONSTRAINT IF EXISTS delivery_attempts_delivery_seq_fkey;
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_event_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_destination_id_fkey;
