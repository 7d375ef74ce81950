-- Forgotten means gone: a prune's report keeps which memory went, when and why, not
-- what it said.
ALTER TABLE pruned DROP COLUMN text;
