-- Facts about the installation as a whole, one row each (issue 19).
-- `encryption_key_check`: a check value of the encryption key that seals the signing secrets
-- (an HMAC made with the key, never the key itself), recorded by the first process that starts,
-- so that a process given another key refuses to start instead of failing every delivery.
CREATE TABLE settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
