-- Operational notifications (issue 31, decision 48): the operator's own notices
-- (destination.failing, destination.recovered, …) are events of an internal workspace,
-- `ws_operations`, made when operations endpoints are configured; its destinations are those
-- endpoints. Nothing here creates it: a server without endpoints has no such workspace.

-- When the destination's last `destination.failing` notice was published, so that at most one
-- goes out per `failingNoticeInterval` however often its circuit opens, across restarts
-- and processes; and when its last `destination.recovered` was, so that a recovery is told once
-- for each failing told. NULL: never.
ALTER TABLE destinations ADD COLUMN ops_failing_at BIGINT;
ALTER TABLE destinations ADD COLUMN ops_recovered_at BIGINT;
