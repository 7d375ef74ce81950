-- Users who let a persona bring what they said in private into group chats (their own
-- conversations there only).
CREATE TABLE dm_sharing (
    persona TEXT NOT NULL,
    user    TEXT NOT NULL,  -- "platform:user id"
    since   REAL NOT NULL,
    PRIMARY KEY (persona, user)
) WITHOUT ROWID;
