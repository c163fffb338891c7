-- The relay's queue as a narrow table of its own (issue 11; docs/performance.md, "WAL per
-- authorization").
--
-- Why: marking an event relayed was an UPDATE of outbox_events.relayed_at, and a PostgreSQL
-- update writes a whole new version of the row: the event's kilobyte of payload again, and,
-- the column being in the predicate of the partial index outbox_events_unrelayed, not as a HOT
-- update, so a new primary-key entry too. That was about 1.1 KB of an authorization's 6.4 KB of
-- WAL, and a dead kilobyte per event for vacuum. Now the transaction that writes an event also
-- inserts its id here, and the relay deletes the id in the transaction that hands the event on:
-- a few dozen bytes each way. An event is relayed exactly when its id is not here (the
-- webhook.test event, sent at once to its one endpoint, is never here).
--
-- No foreign key, as for the authorize path's other tables (migration 0007): the id is written
-- in the event's own transaction; src/store/invariants.ts checks that every id names an event.
--
-- A process of a version before this one writes events without their row here, and its relay
-- updates the column dropped below (which fails, loudly): stop such processes before this
-- version starts; an event one of them wrote afterwards would wait unrelayed.
CREATE TABLE outbox_unrelayed (
  id text PRIMARY KEY
);
INSERT INTO outbox_unrelayed (id) SELECT id FROM outbox_events WHERE relayed_at IS NULL;
DROP INDEX outbox_events_unrelayed;
ALTER TABLE outbox_events DROP COLUMN relayed_at;
