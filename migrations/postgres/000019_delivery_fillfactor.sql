-- Room on each page of deliveries (issue 32, decision 55). Every delivery's row is updated at
-- least once (its result), and that update cannot be HOT (it takes the row out of
-- deliveries_due's predicate). When the new version does not fit on the old one's page, the
-- update goes to another page: it locks the old version with a WAL record of its own, dirties
-- two pages, and logs the new version whole (no prefix shared with the old one). At the
-- default fillfactor (100) 70 % of the updates did that; at 50, 9 % (bench:statements).
-- A change of the catalogue alone: only pages filled from now on keep the room, existing
-- ones are not rewritten, and no index changes.
ALTER TABLE deliveries SET (fillfactor = 50);
