-- A delivery's first attempt, when it ends the delivery, is kept in the delivery's own row
-- (issue 32, decision 53). Most deliveries end at their first attempt, and the record of that
-- attempt was a row of delivery_attempts of its own, with its two index entries, written in
-- the same statement that updates the delivery anyway. Now the update carries it.
-- delivery_attempts keeps every other attempt: a first attempt that leads to a retry (the
-- row of a waiting delivery is rewritten by each claim and circuit change, and would carry
-- its body each time), and the attempts after it. Attempts recorded before this migration
-- stay where they are; readers take a delivery's attempts from both places.
ALTER TABLE deliveries ADD COLUMN first_started_at BIGINT;
ALTER TABLE deliveries ADD COLUMN first_duration_ms INTEGER;
ALTER TABLE deliveries ADD COLUMN first_status_code INTEGER;
ALTER TABLE deliveries ADD COLUMN first_error_class TEXT;
ALTER TABLE deliveries ADD COLUMN first_error TEXT;
ALTER TABLE deliveries ADD COLUMN first_response_body TEXT;
ALTER TABLE deliveries ADD COLUMN first_webhook_signature TEXT;
