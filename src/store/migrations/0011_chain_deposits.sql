-- Deposits found on chain (issue 15): transfers into a vault's deposit address.
--
-- One row per transfer into a deposit address, keyed by where it is on chain (its
-- transaction's signature and the instruction's place in it), so that the same transfer is
-- recorded, and credited, once whatever restarts, retries or watchers run at once: the
-- watcher's insert and the credit are one SQL transaction, and the unique key refuses a
-- second row. A transfer that must not be credited (another mint, below the minimum) is kept
-- as `ignored`, with its reason, so that its owner sees it.
--
-- The reconciliation of reserves reads `credited` rows as money that is on chain but still
-- at a deposit address (not yet swept into the treasury); a sweep moves a row to `swept` in
-- the transaction that records the sweep's confirmation.
CREATE TABLE IF NOT EXISTS chain_deposits (
  id text PRIMARY KEY,
  vault_id text NOT NULL REFERENCES vaults (id),
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  -- The vault's currency; for an ignored transfer of another mint, still the vault's.
  currency text NOT NULL,
  signature text NOT NULL,
  -- The transfer's place in its transaction: the outer instruction's index, and the inner
  -- instruction's (-1 for an outer instruction).
  instruction_index integer NOT NULL CHECK (instruction_index >= 0),
  inner_index integer NOT NULL DEFAULT -1 CHECK (inner_index >= -1),
  slot bigint NOT NULL CHECK (slot >= 0),
  sender text NOT NULL,
  -- The token's mint; NULL for SOL.
  mint text,
  -- In the transferred token's own units (for an ignored foreign mint, its own decimals).
  amount numeric NOT NULL CHECK (amount >= 0),
  status text NOT NULL CHECK (status IN ('credited', 'ignored', 'swept')),
  ignored_reason text,
  -- The completed `deposit` transaction that credited the vault; NULL when ignored.
  transaction_id text REFERENCES transactions (id),
  found_at timestamptz NOT NULL,
  credited_at timestamptz,
  swept_at timestamptz,
  UNIQUE (signature, instruction_index, inner_index),
  CHECK ((status = 'ignored') = (ignored_reason IS NOT NULL)),
  CHECK ((status = 'ignored') = (transaction_id IS NULL))
);
CREATE INDEX IF NOT EXISTS chain_deposits_by_vault ON chain_deposits (vault_id, id DESC);
-- The sweeper's and the reconciliation's work list: credited, not yet swept.
CREATE INDEX IF NOT EXISTS chain_deposits_unswept ON chain_deposits (mode, currency) WHERE status = 'credited';
