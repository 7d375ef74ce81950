-- The daily upkeep deletes the outreach ledger's old settled entries: found by their age.
CREATE INDEX outreach_by_age ON outreach (at);
-- Who is due for a check-in is read through an index, not by reading every silent contact
-- each round: `checked_in` is the last_heard of the absence whose check-in is settled (sent,
-- refused, dropped), so a contact leaves the index once settled and comes back when heard.
ALTER TABLE contacts ADD COLUMN checked_in REAL;
CREATE INDEX contacts_checkin_due ON contacts (persona, platform, last_heard)
    WHERE private = 1 AND quiet = 0 AND (checked_in IS NULL OR checked_in < last_heard);
