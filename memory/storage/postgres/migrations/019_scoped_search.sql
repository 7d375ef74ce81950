-- Full-text search finds a scope's matches through its own tag, not through every scope's: the
-- index holds each memory's words and one word naming its scope (an md5 of the scope in
-- letters, which the `simple` parser keeps whole), and a search asks for the tag AND the
-- cue's word, so GIN walks the short list of the scope's memories instead of building a bitmap
-- of every memory in the database that holds the word (a cost that grew with the community,
-- not the scope). Ranking still reads `search` alone. The expression is the store's
-- `_SEARCH_INDEXED` (memory/storage/postgres/memories.py), word for word, so queries use it.
CREATE INDEX memories_search_scoped ON memories USING GIN (
    (search || to_tsvector('simple', 'kzs' || translate(md5(scope), '0123456789', 'ghijklmnop')))
);
DROP INDEX memories_search;
