-- The daily upkeep deletes the outreach ledger's old settled entries: found by their age.
CREATE INDEX outreach_by_age ON outreach (at);
-- Who is due for a check-in is read through an index, not by reading every silent contact
-- each round: `checked_in` is the last_heard of the absence whose check-in is settled (sent,
-- refused, dropped), so a contact leaves the index once settled and comes back when heard.
ALTER TABLE contacts ADD COLUMN checked_in DOUBLE PRECISION;
CREATE INDEX contacts_checkin_due ON contacts (persona, platform, last_heard)
    WHERE private = 1 AND quiet = 0 AND (checked_in IS NULL OR checked_in < last_heard);
-- A room's group settings (/group) are kept in each process's memory: tell the others when
-- they change (the payload: the writer, the persona, the room).
CREATE FUNCTION kizuna_rooms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed channel_floor%ROWTYPE;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
    PERFORM pg_notify(
        'kizuna_rooms',
        current_setting('application_name') || '|' || changed.persona || '|' || changed.room
    );
    RETURN NULL;
END $$;
CREATE TRIGGER rooms_changed AFTER INSERT OR DELETE OR UPDATE
    ON channel_floor FOR EACH ROW EXECUTE FUNCTION kizuna_rooms_changed();
