-- The daily upkeep deletes intentions long closed: found by when they were closed.
CREATE INDEX intentions_settled ON intentions (done_at) WHERE state <> 'pending';
