-- The daily upkeep deletes encoded conversations once they are old: found by their age.
CREATE INDEX conversations_by_age ON conversations (ended_at, id) WHERE encoded_at IS NOT NULL;
-- A reminder the tool set is given its conversation when that is archived; one kept before
-- has none, and keeps the conversations of its time from being deleted: found by its time.
CREATE INDEX intentions_loose ON intentions (created_at) WHERE conversation_id IS NULL;
