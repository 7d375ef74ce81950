-- A session's older turns, a row each: the session's own row holds its newest turns until
-- they outgrow a page, then they move here, so a save writes about as much whether the
-- conversation is short or long (not the whole conversation again). The session's row
-- says which are here ("first", "rows"); one written before this holds all its turns.
CREATE TABLE session_turns (
    persona TEXT NOT NULL,
    scope   TEXT NOT NULL,
    seq     BIGINT NOT NULL,
    turn    TEXT NOT NULL,
    PRIMARY KEY (persona, scope, seq)
);
