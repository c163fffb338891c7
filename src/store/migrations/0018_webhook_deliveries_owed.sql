-- What each endpoint is still owed (contract section 18, v1.2; issue 37): one row per
-- (event, endpoint) delivery that has not ended, so that PostgreSQL, never Redis alone, knows
-- every delivery still to be made. A Redis that restarts empty (no persistence, a failover
-- that lost its last writes) loses the jobs; the rows remain, and the worker's re-queue loop
-- (src/workers/delivery-requeue.ts) adds each lost job again, under the same id.
--
-- Written by the relay in the transaction that claims the events (one INSERT a round);
-- updated by each failed attempt that will be retried (attempts made, when the next is due)
-- and deleted when the delivery ends (delivered, endpoint gone or stopped, last attempt
-- failed), in the statement that records the attempt: no round trip of its own.
--
-- due_at: when the job should next be taken by a worker. The re-queue loop looks only at rows
-- overdue by a grace period, oldest first, through webhook_deliveries_owed_due.
--
-- No foreign keys, as for the authorize path's tables (migration 0007): every writer has just
-- read the event and endpoint, and the per-row trigger checks would cost the relay's hot path.
CREATE TABLE webhook_deliveries_owed (
  event_id text NOT NULL,
  endpoint_id text NOT NULL,
  attempts_made integer NOT NULL DEFAULT 0 CHECK (attempts_made >= 0),
  due_at timestamptz NOT NULL,
  PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_owed_due ON webhook_deliveries_owed (due_at);
