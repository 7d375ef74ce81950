-- Another process's indexes are derived from the memories: tell them when a scope's
-- change (one notification per scope and transaction; the payload names the writer).
CREATE FUNCTION kizuna_memories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN changed := OLD.scope; ELSE changed := NEW.scope; END IF;
    PERFORM pg_notify(
        'kizuna_memories',
        current_setting('application_name') || '|' || changed
    );
    RETURN NULL;
END $$;
CREATE TRIGGER memories_changed AFTER INSERT OR DELETE OR UPDATE OF embedding
    ON memories FOR EACH ROW EXECUTE FUNCTION kizuna_memories_changed();
