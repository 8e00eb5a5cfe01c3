-- Every process that keeps API keys in memory hears of each change to them (issue 32,
-- decision 63): a notice on `svc_api_keys`, delivered to the listeners at the commit, for each
-- key deleted and each key changed in anything but the once-a-minute note of its last use
-- (compared as whole rows, so that a column added later counts without a new trigger; an
-- UPDATE that changes nothing notifies nobody). Notices alike in one transaction are sent
-- once. Inserts need none: a key that was not found is never kept.
-- (The migration runner splits at a ';' that ends a line: none does inside the body.)
CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('svc_api_keys', ''); RETURN NULL; END
$$;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE ON api_keys
  FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION api_keys_changed();

CREATE TRIGGER api_keys_deleted
  AFTER DELETE ON api_keys
  FOR EACH ROW
  EXECUTE FUNCTION api_keys_changed();

CREATE TRIGGER api_keys_truncated
  AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT
  EXECUTE FUNCTION api_keys_changed();
