-- What personas mean to bring up later (memory.records.Intention): follow-ups on what a user
-- said is coming, reminders, special days. `persona` is the scope's, for the scheduler, which
-- looks across a persona's scopes.
CREATE TABLE intentions (
    id              BIGSERIAL PRIMARY KEY,  -- never reused: the ledger keys by it
    scope           TEXT NOT NULL,
    persona         TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('follow_up', 'reminder', 'special_day')),
    what            TEXT NOT NULL,
    ask             TEXT NOT NULL,
    due_at          DOUBLE PRECISION NOT NULL,
    until           DOUBLE PRECISION NOT NULL,
    created_at      DOUBLE PRECISION NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (
        state IN ('pending', 'done', 'cancelled', 'missed')
    ),
    conversation_id BIGINT,
    yearly          INTEGER NOT NULL DEFAULT 0,
    done_at         DOUBLE PRECISION
);
CREATE INDEX intentions_by_scope ON intentions (scope, due_at);
CREATE INDEX intentions_due ON intentions (persona, due_at) WHERE state = 'pending';
-- One pending intention per user, kind, event and due time: the same news told twice is one.
CREATE UNIQUE INDEX intentions_pending_once ON intentions (scope, user_id, kind, what, due_at)
    WHERE state = 'pending';
-- What a persona knows of reaching each person first (memory.records.Contact): no words of
-- theirs. `hours`: JSON, 24 counts of their messages by UTC hour.
CREATE TABLE contacts (
    persona       TEXT NOT NULL,
    platform      TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    private       INTEGER NOT NULL DEFAULT 0,
    last_heard    DOUBLE PRECISION,
    last_answered DOUBLE PRECISION,
    hours         TEXT NOT NULL,
    timezone      TEXT,
    quiet         INTEGER NOT NULL DEFAULT 0,
    refused_at    DOUBLE PRECISION,
    updated_at    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (persona, platform, user_id)
);
CREATE INDEX contacts_by_last_heard ON contacts (persona, platform, last_heard);
-- The messages personas write first, each claimed once (memory.records.Outreach).
CREATE TABLE outreach (
    persona  TEXT NOT NULL,
    platform TEXT NOT NULL,
    user_id  TEXT NOT NULL,
    key      TEXT NOT NULL,
    state    TEXT NOT NULL CHECK (state IN ('claimed', 'sending', 'sent', 'refused', 'dropped')),
    at       DOUBLE PRECISION NOT NULL,
    by       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (persona, platform, user_id, key)
);
CREATE INDEX outreach_by_time ON outreach (persona, platform, user_id, at);
