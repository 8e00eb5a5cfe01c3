-- When each API key was last used (issue 19), for `svc admin keys list`. Written at most once
-- a minute per key (store/credential-store.ts), never on every request.
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
