-- Who opened a listen session (issue 27, decision 39): only that credential, or one with
-- events:write, may resume, end or take over the session.
-- `opened_by`: `key:<API key id>` or `user:<user id>`; NULL for a webhook destination, and
-- for a session opened before this migration (which then needs events:write).
ALTER TABLE destinations ADD COLUMN opened_by TEXT;
