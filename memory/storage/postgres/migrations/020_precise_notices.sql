-- The notifications of 002 and 014 named a scope only, so another process threw away all it
-- derived from the scope (its FAISS index, word index, links, copy of the rows) and read the
-- whole scope again for one memory forgotten or reinforced: the daily prune, which touches
-- every scope, had every process rebuild every large scope it held. Now each statement names
-- the memories it changed and how, one notification per scope and statement (statement-level
-- triggers over transition tables: a statement of 10k rows sends one, not 10k), and the
-- processes follow it as they follow their own writes (memory/recall/derived.py).
--
-- Payload: "writer KIND,IDS|scope", KIND one of + (added), - (deleted), ~ (embedded again),
-- * (changed in place, on kizuna_memories_touched), the ids comma-separated; ids only, never
-- text. Scope-wide, as before, "writer|scope": for more than 400 ids, a scope emptied (a
-- wipe), a change the processes cannot follow exactly (a memory's text, speaker or context
-- rewritten, a memory moved to another scope). An older process reads any payload as
-- scope-wide (the writer it compares holds the ids too), as it did.
CREATE FUNCTION kizuna_memories_notify(channel TEXT, kind TEXT, scope TEXT, ids BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    -- Neither separator is left in it: a stray one would name another scope.
    writer TEXT := translate(current_setting('application_name'), '| ', '');
    payload TEXT;
BEGIN
    IF kind <> '' AND cardinality(ids) <= 400 THEN
        payload := writer || ' ' || kind || array_to_string(ids, ',') || '|' || scope;
        IF octet_length(payload) <= 7000 THEN  -- well under NOTIFY's 8000 bytes
            PERFORM pg_notify(channel, payload);
            RETURN;
        END IF;
    END IF;
    PERFORM pg_notify(channel, writer || '|' || scope);
END $$;

CREATE FUNCTION kizuna_memories_noticed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    one RECORD;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR one IN SELECT scope, array_agg(id ORDER BY id) AS ids FROM added GROUP BY scope LOOP
            PERFORM kizuna_memories_notify('kizuna_memories', '+', one.scope, one.ids);
        END LOOP;
    ELSIF TG_OP = 'DELETE' THEN
        FOR one IN SELECT scope, array_agg(id ORDER BY id) AS ids FROM gone GROUP BY scope LOOP
            PERFORM kizuna_memories_notify(
                'kizuna_memories',
                CASE WHEN EXISTS (SELECT 1 FROM memories AS m WHERE m.scope = one.scope)
                    THEN '-' ELSE '' END,
                one.scope,
                one.ids
            );
        END LOOP;
    ELSE
        -- No column list on a trigger with transition tables: each row's old and new values
        -- are compared here. Beside the cases named above, a memory's previous id nulled and
        -- its context emptied is what a deletion does to the memory after it, which the
        -- processes follow from the deletion itself.
        FOR one IN
            SELECT n.scope,
                bool_or(
                    o.scope IS DISTINCT FROM n.scope OR o.text IS DISTINCT FROM n.text
                    OR o.speaker IS DISTINCT FROM n.speaker
                    OR o.search_body IS DISTINCT FROM n.search_body
                    OR (o.previous_id IS DISTINCT FROM n.previous_id AND n.previous_id IS NOT NULL)
                    OR (o.search_context IS DISTINCT FROM n.search_context
                        AND n.search_context <> '')
                ) AS rewritten,
                array_agg(n.id ORDER BY n.id) FILTER (
                    WHERE o.embedding IS DISTINCT FROM n.embedding
                    OR o.embedder IS DISTINCT FROM n.embedder
                ) AS embedded,
                array_agg(n.id ORDER BY n.id) FILTER (
                    WHERE (o.kind, o.category, o.importance, o.sentiment, o.created_at,
                        o.last_recalled_at, o.recall_count, o.strength, o.related,
                        o.conversation_id, o.previous_id, o.speaker_id, o.recent_recalls)
                    IS DISTINCT FROM (n.kind, n.category, n.importance, n.sentiment, n.created_at,
                        n.last_recalled_at, n.recall_count, n.strength, n.related,
                        n.conversation_id, n.previous_id, n.speaker_id, n.recent_recalls)
                ) AS touched
            FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id
            GROUP BY n.scope
        LOOP
            IF one.rewritten THEN
                PERFORM kizuna_memories_notify('kizuna_memories', '', one.scope, NULL);
            ELSE
                IF one.embedded IS NOT NULL THEN
                    PERFORM kizuna_memories_notify('kizuna_memories', '~', one.scope, one.embedded);
                END IF;
                IF one.touched IS NOT NULL THEN
                    PERFORM kizuna_memories_notify(
                        'kizuna_memories_touched', '*', one.scope, one.touched
                    );
                END IF;
            END IF;
        END LOOP;
        -- The scope a memory left.
        FOR one IN
            SELECT DISTINCT o.scope FROM old_rows AS o JOIN new_rows AS n ON n.id = o.id
            WHERE o.scope <> n.scope
        LOOP
            PERFORM kizuna_memories_notify('kizuna_memories', '', one.scope, NULL);
        END LOOP;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER memories_changed ON memories;
DROP TRIGGER memories_touched ON memories;
DROP FUNCTION kizuna_memories_changed();
DROP FUNCTION kizuna_memories_touched();
CREATE TRIGGER memories_added AFTER INSERT ON memories REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION kizuna_memories_noticed();
CREATE TRIGGER memories_deleted AFTER DELETE ON memories REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION kizuna_memories_noticed();
CREATE TRIGGER memories_updated AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION kizuna_memories_noticed();
