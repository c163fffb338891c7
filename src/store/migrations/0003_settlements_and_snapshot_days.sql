-- Clearing batches (issue 7, POST /v1/settlements): a batch of capture records posted by the
-- settlement worker, one record at a time, each idempotently (a record is settled once).
CREATE TABLE settlements (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  status text NOT NULL CHECK (status IN ('pending', 'completed')),
  record_count integer NOT NULL CHECK (record_count BETWEEN 1 AND 10000),
  captured_count integer NOT NULL DEFAULT 0,
  failed_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  completed_at timestamptz,
  CHECK (captured_count + failed_count <= record_count)
);
CREATE INDEX settlements_owner ON settlements (account_id, mode, id DESC);

CREATE TABLE settlement_records (
  settlement_id text NOT NULL REFERENCES settlements (id),
  position integer NOT NULL CHECK (position >= 0),
  authorization_id text NOT NULL,
  -- As the client sent it: parsed at settlement time in the authorization's currency.
  amount text,
  status text NOT NULL CHECK (status IN ('pending', 'captured', 'failed')),
  error_code text,
  error_message text,
  settled_at timestamptz,
  PRIMARY KEY (settlement_id, position)
);
CREATE INDEX settlement_records_pending ON settlement_records (settlement_id, position)
  WHERE status = 'pending';

-- The UTC days whose end-of-day balance snapshots are complete: the snapshot job starts after
-- the last of them, so missed days are backfilled in order.
CREATE TABLE snapshot_days (
  day date PRIMARY KEY,
  completed_at timestamptz NOT NULL
);
