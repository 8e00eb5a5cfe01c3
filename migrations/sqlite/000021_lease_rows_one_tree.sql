-- A claim's lease row in one B-tree (issue 32, decision 62). The rowid table of 000019, with its
-- key's index and its expiry index, had each commit that writes or deletes a lease write a page
-- of all three to the WAL: 2.6 of a publish commit's 16 pages. Keyed by the lease alone, and
-- without an expiry index: the table holds one row per claim in flight, which the backlog's
-- count already reads whole, so a claim finds the leases that ran out by reading it.
CREATE TABLE delivery_leases_one_tree (
  lease TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL,
  seqs TEXT NOT NULL
) WITHOUT ROWID;

INSERT INTO delivery_leases_one_tree (lease, expires_at, seqs)
  SELECT lease, expires_at, seqs FROM delivery_leases;

DROP TABLE delivery_leases;

ALTER TABLE delivery_leases_one_tree RENAME TO delivery_leases;
