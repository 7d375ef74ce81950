CREATE TABLE sessions (
    persona    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    snapshot   TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (persona, scope)
);
CREATE TABLE conversations (
    id         INTEGER PRIMARY KEY,
    persona    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at   REAL NOT NULL,
    reason     TEXT NOT NULL,
    turns      TEXT NOT NULL,
    encoded_at REAL
);
CREATE INDEX conversations_by_scope ON conversations (persona, scope, ended_at);
CREATE INDEX conversations_to_encode ON conversations (encoded_at) WHERE encoded_at IS NULL;
