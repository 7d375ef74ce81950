-- A recall rewrites its memories' recall state (count, times, strength), none of it indexed.
-- With room on the row's page the new version stays there (a HOT update) and no index is
-- touched; on a packed page every index takes an entry, the vector graph an insertion of its
-- own (at a million memories, a recall's reinforcement cost the server more than its search).
-- Pages written from now on keep a fifth free; `VACUUM FULL memories` repacks older ones so.
ALTER TABLE memories SET (fillfactor = 80);
