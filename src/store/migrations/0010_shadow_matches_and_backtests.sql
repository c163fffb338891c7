-- Shadow rules, recorded, and policy backtests (issue 14, "Controls").
--
-- A card authorization's shadow matches (the shadow rules of the vault's policy whose
-- conditions held) are written with the transaction, in the authorize batch's one statement.
-- NULL when there are none, which is nearly always: an authorization with no shadow match
-- writes nothing more than before. Adding a nullable column without a default changes only the
-- catalogue: no table rewrite, whatever the table's size.
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS shadow_matches jsonb;

-- A backtest replays a draft policy over the recorded authorizations of a vault, or of one
-- card, in a window of at most 90 UTC days (src/store/ops/backtests.ts). Small windows are
-- replayed in the request and stored completed; larger ones are queued here and replayed by a
-- BullMQ job of the worker role (src/workers/backtests.ts). This table, not Redis, is the
-- record: a job lost with Redis is added again by the relay, and a replay whose worker died is
-- replayed again from the start once its lease has expired.
CREATE TABLE IF NOT EXISTS backtests (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  vault_id text NOT NULL REFERENCES vaults (id),
  -- A card backtest replays this card's authorizations under the draft alone.
  card_id text REFERENCES cards (id),
  -- The draft as compiled (defaults applied), in the vault's currency.
  policy jsonb NOT NULL,
  start_date date NOT NULL,
  end_date date NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  -- Progress: authorizations replayed so far by the current run, of `total` (counted when the
  -- run starts; NULL before).
  replayed integer NOT NULL DEFAULT 0 CHECK (replayed >= 0),
  total integer CHECK (total >= 0),
  -- The answer (bounded: at most 100 examples and a bounded breakdown); set once completed.
  result jsonb,
  failure_message text,
  -- Runs started (a run that dies is replayed again, up to a bound).
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- The run that holds the backtest, until when: a run writes progress and its result only
  -- while its token is the one here.
  lease_token text,
  lease_expires_at timestamptz,
  -- The relay's jobs for this backtest so far: the BullMQ job id is (id, generation).
  job_generation integer NOT NULL DEFAULT 0 CHECK (job_generation >= 0),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  CHECK (end_date >= start_date AND end_date - start_date < 90),
  CHECK ((status = 'completed') = (result IS NOT NULL)),
  CHECK (status IN ('completed', 'failed') = (completed_at IS NOT NULL))
);
-- What the relay looks for: unfinished backtests, oldest first.
CREATE INDEX IF NOT EXISTS backtests_unfinished ON backtests (created_at)
  WHERE status IN ('queued', 'running');
