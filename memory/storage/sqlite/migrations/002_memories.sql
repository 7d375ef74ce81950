CREATE TABLE memories (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: ids are shown
    scope            TEXT NOT NULL,
    text             TEXT NOT NULL,
    speaker          TEXT,
    kind             TEXT NOT NULL CHECK (
        kind IN ('episodic', 'fact', 'explicit', 'summary')
    ),
    category         TEXT CHECK (
        category IN ('work_study', 'social_emotional', 'special', 'personal_daily')
    ),
    importance       INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 3),
    sentiment        REAL NOT NULL DEFAULT 0 CHECK (sentiment BETWEEN -1 AND 1),
    created_at       REAL NOT NULL,
    last_recalled_at REAL,
    recall_count     INTEGER NOT NULL DEFAULT 0,
    strength         REAL NOT NULL,
    related          TEXT NOT NULL DEFAULT '[]',
    conversation_id  INTEGER,
    previous_id      INTEGER,
    embedding        BLOB,
    embedder         TEXT
);
CREATE INDEX memories_by_scope ON memories (scope, created_at);
CREATE INDEX memories_by_scope_id ON memories (scope, id);
CREATE INDEX memories_by_previous ON memories (previous_id) WHERE previous_id IS NOT NULL;
-- The lexical half of recall; rowid = memories.id. `scope_tag` is one token per scope so
-- a search intersects with its scope inside FTS5 instead of scoring every scope's rows;
-- `context` holds the memory just before (what this one answers, often).
CREATE VIRTUAL TABLE memories_fts USING fts5(
    scope_tag, body, context, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE embedding_cache (
    embedder  TEXT NOT NULL,
    text_hash BLOB NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (embedder, text_hash)
) WITHOUT ROWID;
