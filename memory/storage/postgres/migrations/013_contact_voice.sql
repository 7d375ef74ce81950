-- Whether a person wants the persona's replies spoken aloud too (/voice on|off): NULL until
-- they say, when the persona's [voice] speak decides; 0 off, 1 on.
ALTER TABLE contacts ADD COLUMN voice INTEGER;
