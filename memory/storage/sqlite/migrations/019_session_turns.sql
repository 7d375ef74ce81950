-- A session's turns, a row each: a save writes the turns said since the last one, not the
-- whole conversation again. The session's snapshot keeps the rest, with the numbers of the
-- turns it has ("first", "count"); a snapshot written before this holds its turns itself,
-- and its next save moves them here.
CREATE TABLE session_turns (
    persona TEXT NOT NULL,
    scope   TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    turn    TEXT NOT NULL,
    PRIMARY KEY (persona, scope, seq)
) WITHOUT ROWID;
