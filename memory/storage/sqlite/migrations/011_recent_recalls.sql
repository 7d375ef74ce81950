-- A memory's latest recall times (JSON seconds since the epoch, oldest first, at most
-- memory.records.RECENT_RECALLS), so a forgetting policy can sum their traces without reading
-- the recalls log per memory. Until now a policy saw only the last recall: that one starts it.
ALTER TABLE memories ADD COLUMN recent_recalls TEXT NOT NULL DEFAULT '[]';
UPDATE memories SET recent_recalls = json_array(last_recalled_at)
    WHERE last_recalled_at IS NOT NULL AND recall_count > 0;
