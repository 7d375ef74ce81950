-- Who said what a memory records, by the platform's stable id: `speaker` is the display
-- name they had then, which changes and collides.
ALTER TABLE memories ADD COLUMN speaker_id TEXT;
