-- The other names a member is known by in a scope (earlier display names, nicknames they
-- asked for), one a line, most recent first: recall finds a person by any of them.
ALTER TABLE profiles ADD COLUMN aliases TEXT NOT NULL DEFAULT '';
-- Recall reads every member's names on each turn of a shared room: from this index alone,
-- never the profiles' text.
CREATE INDEX profiles_names ON profiles (scope, updated_at) INCLUDE (user_id, name, aliases);
