-- Which scopes hold memories without a vector of the embedder in use, asked at each start:
-- found through these, not by reading every memory's row.
CREATE INDEX memories_by_embedder ON memories (embedder, scope);
CREATE INDEX memories_vectorless ON memories (scope) WHERE embedding IS NULL;
