-- Every process that keeps API keys in memory hears of each change to them (issue 32,
-- decision 63): after any statement that deletes keys, or sets a column of theirs other than
-- the once-a-minute note of their last use, a notice on `svc_api_keys`, delivered to the
-- listeners at its commit. A statement-level trigger: one notice however many rows, and none
-- for the use notes. Inserts need none: a key that was not found is never kept. A column added
-- to api_keys later must be added to this list unless it is as harmless as last_used_at.
-- (The migration runner splits at a ';' that ends a line: none does inside the body.)
CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('svc_api_keys', ''); RETURN NULL; END
$$;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE OF id, workspace_id, token_hash, scopes, name, created_at, expires_at, revoked_at
    OR DELETE OR TRUNCATE
  ON api_keys
  FOR EACH STATEMENT
  EXECUTE FUNCTION api_keys_changed();
