-- The other names a member is known by in a scope (earlier display names, nicknames they
-- asked for), one a line, most recent first: recall finds a person by any of them.
ALTER TABLE profiles ADD COLUMN aliases TEXT NOT NULL DEFAULT '';
