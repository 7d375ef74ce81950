CREATE TABLE sessions (
    persona    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    snapshot   TEXT NOT NULL,  -- text, not JSONB: a damaged snapshot is reported, as in SQLite
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (persona, scope)
);
CREATE TABLE conversations (
    id         BIGSERIAL PRIMARY KEY,
    persona    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    ended_at   DOUBLE PRECISION NOT NULL,
    reason     TEXT NOT NULL,
    turns      TEXT NOT NULL,
    encoded_at DOUBLE PRECISION,
    attempts   INTEGER NOT NULL DEFAULT 0,
    retry_at   DOUBLE PRECISION,
    recap      TEXT
);
CREATE INDEX conversations_by_scope ON conversations (persona, scope, ended_at);
CREATE INDEX conversations_to_encode ON conversations (ended_at) WHERE encoded_at IS NULL;
CREATE TABLE memories (
    id               BIGSERIAL PRIMARY KEY,  -- never reused: ids are shown
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
    sentiment        DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (sentiment BETWEEN -1 AND 1),
    created_at       DOUBLE PRECISION NOT NULL,
    last_recalled_at DOUBLE PRECISION,
    recall_count     INTEGER NOT NULL DEFAULT 0,
    strength         DOUBLE PRECISION NOT NULL,
    related          TEXT NOT NULL DEFAULT '[]',
    conversation_id  BIGINT,
    previous_id      BIGINT,
    embedding        BYTEA,  -- float32, native byte order, as in SQLite
    embedder         TEXT,
    -- The full-text index: the memory's prepared text (weight A) and the memory's before
    -- it (weight B, what this one answers, often).
    search_body      TEXT NOT NULL DEFAULT '',
    search_context   TEXT NOT NULL DEFAULT '',
    search           TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', search_body), 'A')
        || setweight(to_tsvector('simple', search_context), 'B')
    ) STORED
);
CREATE INDEX memories_by_scope ON memories (scope, created_at);
CREATE INDEX memories_by_scope_id ON memories (scope, id);
CREATE INDEX memories_by_previous ON memories (previous_id) WHERE previous_id IS NOT NULL;
CREATE INDEX memories_search ON memories USING GIN (search);
CREATE TABLE embedding_cache (
    embedder  TEXT NOT NULL,
    text_hash BYTEA NOT NULL,
    vector    BYTEA NOT NULL,
    PRIMARY KEY (embedder, text_hash)
);
CREATE INDEX embedding_cache_by_hash ON embedding_cache (text_hash);
CREATE TABLE diary (
    scope         TEXT NOT NULL,
    day           TEXT NOT NULL,  -- YYYY-MM-DD in the persona's timezone
    text          TEXT NOT NULL,
    conversations INTEGER NOT NULL,
    updated_at    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, day)
);
CREATE TABLE profiles (
    scope      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    text       TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, user_id)
);
CREATE TABLE pruned (
    id         BIGSERIAL PRIMARY KEY,
    scope      TEXT NOT NULL,
    memory_id  BIGINT NOT NULL,
    text       TEXT NOT NULL,
    category   TEXT,
    importance INTEGER NOT NULL,
    policy     TEXT NOT NULL,
    reason     TEXT NOT NULL,
    pruned_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX pruned_by_time ON pruned (pruned_at);
CREATE TABLE prune_days (
    scope TEXT PRIMARY KEY,
    day   TEXT NOT NULL  -- the last day the scope was pruned: once a day, across processes
);
CREATE TABLE channel_personas (
    bot_id     TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    persona    TEXT NOT NULL,
    bound_by   TEXT NOT NULL,
    bound_at   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (bot_id, channel_id)
);
CREATE TABLE dm_sharing (
    persona TEXT NOT NULL,
    "user"  TEXT NOT NULL,  -- "platform:user id"
    since   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (persona, "user")
);
CREATE TABLE recalls (
    id        BIGSERIAL PRIMARY KEY,  -- the order of recalls logged at the same time
    memory_id BIGINT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at        DOUBLE PRECISION NOT NULL,
    strength  DOUBLE PRECISION NOT NULL
);
CREATE INDEX recalls_by_memory ON recalls (memory_id, at);
