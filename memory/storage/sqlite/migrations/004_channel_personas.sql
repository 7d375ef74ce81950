-- Which persona speaks in a channel, when one bot hosts several (set by /persona set).
CREATE TABLE channel_personas (
    bot_id     TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    persona    TEXT NOT NULL,
    bound_by   TEXT NOT NULL,
    bound_at   REAL NOT NULL,
    PRIMARY KEY (bot_id, channel_id)
) WITHOUT ROWID;
