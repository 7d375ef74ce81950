-- Encoding: a closed conversation waits here until it is encoded, once. `attempts` and
-- `retry_at` space out retries after a model failure; `recap` is what the next
-- conversation is reminded of.
ALTER TABLE conversations ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN retry_at REAL;
ALTER TABLE conversations ADD COLUMN recap TEXT;
CREATE TABLE diary (
    scope         TEXT NOT NULL,
    day           TEXT NOT NULL,  -- YYYY-MM-DD in the persona's timezone
    text          TEXT NOT NULL,
    conversations INTEGER NOT NULL,
    updated_at    REAL NOT NULL,
    PRIMARY KEY (scope, day)
) WITHOUT ROWID;
CREATE TABLE profiles (
    scope      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    text       TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, user_id)
) WITHOUT ROWID;
CREATE TABLE pruned (
    id         INTEGER PRIMARY KEY,
    scope      TEXT NOT NULL,
    memory_id  INTEGER NOT NULL,
    text       TEXT NOT NULL,
    category   TEXT,
    importance INTEGER NOT NULL,
    policy     TEXT NOT NULL,
    reason     TEXT NOT NULL,
    pruned_at  REAL NOT NULL
);
CREATE INDEX pruned_by_time ON pruned (pruned_at);
CREATE TABLE prune_days (
    scope TEXT PRIMARY KEY,
    day   TEXT NOT NULL  -- the last day the scope was pruned: once a day, across restarts
) WITHOUT ROWID;
