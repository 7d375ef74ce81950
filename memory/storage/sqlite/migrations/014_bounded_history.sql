-- The daily upkeep deletes the outreach ledger's old settled entries: found by their age.
CREATE INDEX outreach_by_age ON outreach (at);
