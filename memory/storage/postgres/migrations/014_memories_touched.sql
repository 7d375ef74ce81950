-- A memory changed in place (reinforced, merged into, related, re-weighed): processes keeping
-- copies of a scope's rows (memory/rowcache.py) hear of it on a channel of its own, so that
-- their indexes, which hold nothing of these columns, are not rebuilt for it (one
-- notification per scope and transaction; the payload names the writer, as in 002).
CREATE FUNCTION kizuna_memories_touched() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'kizuna_memories_touched',
        current_setting('application_name') || '|' || NEW.scope
    );
    RETURN NULL;
END $$;
CREATE TRIGGER memories_touched AFTER UPDATE OF text, speaker, kind, category, importance,
    sentiment, created_at, last_recalled_at, recall_count, strength, related, conversation_id,
    previous_id, speaker_id, recent_recalls
    ON memories FOR EACH ROW EXECUTE FUNCTION kizuna_memories_touched();
