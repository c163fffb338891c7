-- A card transaction's whole life (contract v1.2, section 16; issue 34): billing currency,
-- partial approval, advice, captures that always post, force captures, refunds, overdrawn
-- vaults, holds that expire by merchant category, and each transaction's timeline of messages.

-- Billing currency (ISO 4217 alphabetic) of a card; the authorize side converts from it.
ALTER TABLE cards ADD COLUMN IF NOT EXISTS billing_currency text NOT NULL DEFAULT 'USD';

-- What a transaction was in the cardholder's billing currency and at the merchant, the rate
-- between them (null: at par), what partial approval was asked for, whether the network took
-- the decision (advice), when its hold expires (null on rows from before this migration: the
-- expiry job takes created_at + HOLD_EXPIRY_HOURS), what merchants refunded of it, what the
-- policy would have said of a force capture, and the original a linked refund credits.
ALTER TABLE transactions
  ADD COLUMN IF NOT EXISTS billing_amount numeric(38, 9) CHECK (billing_amount >= 0),
  ADD COLUMN IF NOT EXISTS billing_currency text,
  ADD COLUMN IF NOT EXISTS merchant_amount numeric(38, 9) CHECK (merchant_amount >= 0),
  ADD COLUMN IF NOT EXISTS merchant_currency text,
  ADD COLUMN IF NOT EXISTS rate jsonb,
  ADD COLUMN IF NOT EXISTS requested_amount numeric(38, 9) CHECK (requested_amount >= 0),
  ADD COLUMN IF NOT EXISTS partial boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS advice boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS expires_at timestamptz,
  ADD COLUMN IF NOT EXISTS refunded_amount numeric(38, 9) NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
  ADD COLUMN IF NOT EXISTS policy_would_decline jsonb,
  ADD COLUMN IF NOT EXISTS original_transaction_id text,
  -- The network's id of a clearing message (a force capture, a refund). Not in
  -- network_transaction_id: that column is the authorization's key, and a network reuses an
  -- authorization's id in its clearing messages, so the two would collide in
  -- transactions_network_key, which stays as migration 0012 made it (the authorize path probes
  -- it by its exact expression).
  ADD COLUMN IF NOT EXISTS message_network_transaction_id text;

-- A force capture or refund is idempotent by its own networkTransactionId, per kind: a refund
-- may carry the id of the capture it refunds.
CREATE UNIQUE INDEX IF NOT EXISTS transactions_message_key
  ON transactions (account_id, mode, type, message_network_transaction_id)
  WHERE message_network_transaction_id IS NOT NULL;

-- The expiry job's read of holds with their own expiry (hold_remaining > 0 is the same
-- predicate as transactions_open_holds, which serves the rows without one).
CREATE INDEX IF NOT EXISTS transactions_hold_expiry ON transactions (expires_at)
  WHERE hold_remaining > 0;

-- Names of CHECK constraints made inline by 0001 are PostgreSQL's choice: find them by what
-- they say. Captures may now exceed the hold (tips, fuel), so captured + held may exceed the
-- authorized amount; and the two new types.
DO $$
DECLARE
  found record;
BEGIN
  FOR found IN
    SELECT conname FROM pg_constraint
    WHERE conrelid = 'transactions'::regclass AND contype = 'c'
      AND (pg_get_constraintdef(oid) LIKE '%captured_amount + hold_remaining%'
           OR (pg_get_constraintdef(oid) LIKE '%type%' AND pg_get_constraintdef(oid) LIKE '%card_authorization%'))
  LOOP
    EXECUTE format('ALTER TABLE transactions DROP CONSTRAINT %I', found.conname);
  END LOOP;
END $$;

-- NOT VALID: every existing row passed the stricter check just dropped, so a scan of the
-- whole history proves nothing; new and updated rows are checked.
ALTER TABLE transactions ADD CONSTRAINT transactions_type_known CHECK (type IN (
  'card_authorization', 'transfer_in', 'transfer_out', 'external_transfer', 'deposit',
  'withdrawal', 'force_capture', 'refund')) NOT VALID;
ALTER TABLE transactions ADD CONSTRAINT transactions_refund_links_original
  CHECK (original_transaction_id IS NULL OR type = 'refund') NOT VALID;

-- Overdrawn vaults: postings the network mandates are recorded even when they take available
-- below 0; the vault is then overdrawn (src/store/context.ts, changeVaultTotals, the one place
-- that sets and clears overdrawn_at). The database still refuses an ordinary change that
-- would overdraw a vault that is not overdrawn.
ALTER TABLE vaults ADD COLUMN IF NOT EXISTS overdrawn_at timestamptz;
ALTER TABLE vaults DROP CONSTRAINT IF EXISTS vaults_available_not_negative;
ALTER TABLE vaults ADD CONSTRAINT vaults_available_negative_only_overdrawn
  CHECK (ledger - pending >= 0 OR overdrawn_at IS NOT NULL);

-- A transaction's timeline: each lifecycle message with the hold it left, for the console and
-- Get Transaction. History, kept like transactions. No foreign key, as for the authorize
-- path's tables (migration 0007): invariants.ts checks that each names a transaction.
CREATE TABLE IF NOT EXISTS transaction_messages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN (
    'authorization', 'increment', 'capture', 'reversal', 'expiry', 'advice', 'refund')),
  amount numeric(38, 9) NOT NULL CHECK (amount >= 0),
  hold_after numeric(38, 9) NOT NULL CHECK (hold_after >= 0),
  network_transaction_id text,
  created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS transaction_messages_transaction
  ON transaction_messages (transaction_id, id);
