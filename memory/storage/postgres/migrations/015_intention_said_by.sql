-- Whose own message asked for an intention or told of it (memory.records.Intention.said_by):
-- only theirs is brought up or written to its user, and only a reminder they asked for
-- themself passes their night hours and /quiet. Those kept before: a reminder the tool set
-- (no conversation: the sender's own) and one of a private chat or of one member's
-- conversation (only they spoke) are their user's; any other, of a group, is not known ('').
ALTER TABLE intentions ADD COLUMN said_by TEXT NOT NULL DEFAULT '';
UPDATE intentions SET said_by = user_id
    WHERE conversation_id IS NULL
    OR strpos(scope, ':dm:') > 0
    OR right(scope, length(':user:' || user_id)) = ':user:' || user_id;
