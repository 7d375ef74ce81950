-- Messages a process keeps while it waits for another process's turn of their
-- conversation: should it die waiting, the next process to take the conversation finds
-- them here (said, and unanswered, as after any crash).
CREATE TABLE conversation_inbox (
    persona    TEXT NOT NULL,
    scope      TEXT NOT NULL,
    holder     TEXT NOT NULL,  -- the waiting process's application_name
    message_id TEXT NOT NULL,
    turn       TEXT NOT NULL,  -- as in a snapshot's turns
    seq        BIGSERIAL,      -- the order they came in
    PRIMARY KEY (persona, scope, holder, message_id)
);
