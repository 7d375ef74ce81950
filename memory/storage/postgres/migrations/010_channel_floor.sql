-- A room's admin's group settings for a persona (when it speaks there: /group), as JSON the
-- bot reads; no row: the persona's own.
CREATE TABLE channel_floor (
    persona  TEXT NOT NULL,
    room     TEXT NOT NULL,  -- "platform:channel id"
    settings TEXT NOT NULL,
    set_by   TEXT NOT NULL,
    set_at   DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (persona, room)
);
