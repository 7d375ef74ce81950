-- Two processes may serve one conversation (Telegram webhooks behind a load balancer, the
-- console beside the web client). Each snapshot names the process that wrote it, and a
-- conversation's turns are taken one at a time under a lease: the process holding it
-- (its application_name) is alive as long as one of its connections is.
ALTER TABLE sessions ADD COLUMN writer TEXT NOT NULL DEFAULT '';
CREATE TABLE conversation_leases (
    persona TEXT NOT NULL,
    scope   TEXT NOT NULL,
    holder  TEXT NOT NULL,
    PRIMARY KEY (persona, scope)
);
