-- Every delivery says where it stands, and each attempt what it sent (issue 28, decision 40).

-- Why a failed delivery failed, as a word: retries_exhausted, circuit_open,
-- destination_refused, destination_deleted, destination_inactive. NULL unless failed. The
-- deliveries that failed before this column are given theirs from the words of last_error,
-- which each of those ends wrote in its own way (a listen session's, from its ending).
ALTER TABLE deliveries ADD COLUMN failure_reason TEXT;
UPDATE deliveries SET failure_reason = CASE
    WHEN last_error LIKE '%its retries ran out while the destination''s circuit was open'
      THEN 'circuit_open'
    WHEN last_error LIKE '%; retries exhausted' THEN 'retries_exhausted'
    WHEN last_error = 'the destination was deleted before delivery' THEN 'destination_deleted'
    WHEN last_error = 'the destination was deactivated before delivery'
      THEN 'destination_inactive'
    WHEN EXISTS (SELECT 1 FROM destinations d
                 WHERE d.id = deliveries.destination_id AND d.kind = 'listen')
      THEN 'destination_deleted'
    ELSE 'destination_refused' END
  WHERE status = 'failed';

-- The Webhook-Signature header an attempt was sent with (t=…,v1=…): a signature, never the
-- secret. The other headers follow from the notification and the release, and the body is the
-- event's. NULL for attempts made before it was kept, and for a listen session's.
ALTER TABLE delivery_attempts ADD COLUMN webhook_signature TEXT;

-- A test event (`svc events send --destination`) is sent to one destination only, whatever it
-- subscribes to; the log shows it as a test. NULL for every other event.
ALTER TABLE events ADD COLUMN test_destination_id TEXT;

-- The test event's one delivery is marked too, in the transaction that queues it, so that a
-- delivery says it is a test without a join to its event on every list. Other publishes leave
-- the default. A constant default: no rewrite of the table.
ALTER TABLE deliveries ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
