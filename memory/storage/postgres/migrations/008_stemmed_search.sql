-- Full text stemmed as SQLite's FTS5 stems it (Porter, accents folded), so both stores match
-- the same words: PostgreSQL cannot run that stemmer, so `search` is no longer computed from
-- the columns but written by the store (memory.text.porter_document). Every row is left to be
-- written again: the store does that when it opens (PgMemories.fill_search).
ALTER TABLE memories ALTER COLUMN search DROP EXPRESSION;
UPDATE memories SET search = NULL;
-- What `fill_search` looks for at every open, found without reading the table.
CREATE INDEX memories_unsearched ON memories (id) WHERE search IS NULL;
-- A write of the text columns that does not write `search` (an upsert by `kizuna migrate`)
-- leaves it to be derived again.
CREATE FUNCTION kizuna_search_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search := NULL;
    RETURN NEW;
END $$;
CREATE TRIGGER memories_search_stale BEFORE UPDATE OF search_body, search_context ON memories
    FOR EACH ROW WHEN (
        NEW.search IS NOT DISTINCT FROM OLD.search
        AND (NEW.search_body IS DISTINCT FROM OLD.search_body
             OR NEW.search_context IS DISTINCT FROM OLD.search_context)
    ) EXECUTE FUNCTION kizuna_search_stale();
