-- Every recall (and merge) that strengthened a memory, with the strength it left: the
-- memory's history, for plotting its retention over time. Goes with the memory.
CREATE TABLE recalls (
    memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at        REAL NOT NULL,
    strength  REAL NOT NULL
);
CREATE INDEX recalls_by_memory ON recalls (memory_id, at);
