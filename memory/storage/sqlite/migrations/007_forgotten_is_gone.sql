-- Forgotten means gone: a prune's report keeps which memory went, when and why, not
-- what it said; and the full-text index is merged into one segment, which leaves out the
-- words of memories deleted before (FTS5 keeps them in old segments until a merge).
-- Store.open then vacuums once, clearing pages freed before secure_delete was on.
ALTER TABLE pruned DROP COLUMN text;
INSERT INTO memories_fts (memories_fts) VALUES ('optimize');
