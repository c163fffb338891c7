-- spendgate schema 1: accounts, vaults, the double-entry ledger, cards, transactions,
-- policies, transfers, webhook endpoints, the event outbox, idempotency records and balance
-- snapshots. Runs on PostgreSQL 15+ and on PGlite (PostgreSQL 18 in WebAssembly).
--
-- Amounts are NUMERIC(38, 9): exact, and wide enough for any amount at the finest scale of
-- any currency (SOL: 9). Integer minor units would not do: 1,000,000,000,000 SOL is 10^21
-- lamports, beyond a bigint. Every row that a client owns carries (account_id, mode), the
-- scope of every lookup, so test and live data never meet.

CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  two_factor_secret_enc text,
  two_factor_enabled boolean NOT NULL DEFAULT false,
  -- Last TOTP time step accepted, so that a code is usable once.
  two_factor_last_step bigint,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  -- SHA-256 of the full key; the key itself is shown once and never stored.
  key_hash text NOT NULL UNIQUE,
  -- The first characters ("sk_test_ab12"), enough to tell keys apart in a list.
  key_prefix text NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz
);

CREATE TABLE vaults (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  currency text NOT NULL,
  network text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'frozen', 'closed')),
  metadata jsonb NOT NULL DEFAULT '{}',
  -- This vault's data key, wrapped by the master key (AES-256-GCM).
  data_key_wrapped text NOT NULL,
  -- Posted funds: the sum of this vault's ledger entries, kept in the same transaction.
  ledger numeric(38, 9) NOT NULL DEFAULT 0,
  -- Open holds: the sum of hold_remaining of its pending transactions.
  pending numeric(38, 9) NOT NULL DEFAULT 0 CHECK (pending >= 0),
  freeze_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  frozen_at timestamptz,
  closed_at timestamptz,
  -- The rule that matters most: available balance is never negative.
  CONSTRAINT vaults_available_not_negative CHECK (ledger - pending >= 0),
  CONSTRAINT vaults_closed_empty CHECK (status <> 'closed' OR (ledger = 0 AND pending = 0))
);
CREATE INDEX vaults_owner ON vaults (account_id, mode, id DESC);

-- Ledger accounts: one per vault (same id as the vault) and, per mode and currency, the
-- system accounts money comes from and goes to: funding, card_settlement, solana_outbound,
-- withdrawals. System balances are not kept on a row (that row would serialize every
-- posting); they are the sum of their entries.
CREATE TABLE ledger_accounts (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('vault', 'funding', 'card_settlement', 'solana_outbound', 'withdrawals')),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  currency text NOT NULL,
  vault_id text UNIQUE REFERENCES vaults (id),
  CHECK ((kind = 'vault') = (vault_id IS NOT NULL))
);

-- Immutable entries. A posting is a set of entries with one posting_id summing to zero.
CREATE TABLE ledger_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  posting_id text NOT NULL,
  ledger_account_id text NOT NULL REFERENCES ledger_accounts (id),
  transaction_id text,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  currency text NOT NULL,
  amount numeric(38, 9) NOT NULL CHECK (amount <> 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX ledger_entries_posting ON ledger_entries (posting_id);
-- Balances as of a moment (snapshots) read one account's entries up to a time.
CREATE INDEX ledger_entries_account ON ledger_entries (ledger_account_id, created_at);

CREATE FUNCTION ledger_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are immutable' USING ERRCODE = 'raise_exception';
END
$$;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_immutable();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_immutable();

-- Double entry, checked by the database at commit: every posting sums to zero.
CREATE FUNCTION ledger_posting_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  SELECT sum(amount) INTO total FROM ledger_entries WHERE posting_id = NEW.posting_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'posting % does not balance (sum %)', NEW.posting_id, total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_posting_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_posting_balanced();

CREATE TABLE cards (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  vault_id text NOT NULL REFERENCES vaults (id),
  status text NOT NULL CHECK (status IN ('active', 'frozen', 'cancelled')),
  last4 text NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
  exp_month integer NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
  exp_year integer NOT NULL,
  cardholder_name text NOT NULL,
  -- Encrypted under the vault's data key; never stored or logged in the clear.
  number_enc text NOT NULL,
  cvv_enc text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  cancelled_at timestamptz
);
CREATE INDEX cards_owner ON cards (account_id, mode, id DESC);
CREATE INDEX cards_vault ON cards (vault_id, id DESC);

CREATE TABLE transactions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  vault_id text NOT NULL REFERENCES vaults (id),
  type text NOT NULL CHECK (type IN ('card_authorization', 'transfer_in', 'transfer_out', 'external_transfer', 'deposit', 'withdrawal')),
  status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'declined')),
  currency text NOT NULL,
  amount numeric(38, 9) NOT NULL CHECK (amount >= 0),
  captured_amount numeric(38, 9) NOT NULL DEFAULT 0 CHECK (captured_amount >= 0),
  -- What is still held for this transaction; non-zero only while pending.
  hold_remaining numeric(38, 9) NOT NULL DEFAULT 0 CHECK (hold_remaining >= 0),
  card_id text REFERENCES cards (id),
  transfer_id text,
  merchant jsonb,
  mcc text,
  network_transaction_id text,
  decline_code text,
  decline_reason jsonb,
  failure_reason text,
  stand_in boolean NOT NULL DEFAULT false,
  -- Spend windows this transaction counts in (its UTC day); see spend_counters.
  spend_day date,
  counterparty_account_id text,
  counterparty_vault_id text,
  -- Metadata, encrypted under the vault's data key (contract section 14); never inline.
  metadata_enc text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  CHECK (status = 'pending' OR hold_remaining = 0),
  CHECK (captured_amount + hold_remaining <= amount)
);
CREATE INDEX transactions_owner ON transactions (account_id, mode, id DESC);
CREATE INDEX transactions_vault ON transactions (vault_id, id DESC);
CREATE INDEX transactions_card ON transactions (card_id, id DESC) WHERE card_id IS NOT NULL;
CREATE INDEX transactions_open_holds ON transactions (created_at) WHERE hold_remaining > 0;
-- The card network's id is the idempotency key of an authorization (contract section 5).
CREATE UNIQUE INDEX transactions_network_id ON transactions (account_id, mode, network_transaction_id)
  WHERE network_transaction_id IS NOT NULL;

-- Every change of a vault's pending total, as a journal: pending at any past moment is the sum
-- of the changes before it, so end-of-day snapshots can be taken, or backfilled, exactly.
CREATE TABLE hold_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  vault_id text NOT NULL REFERENCES vaults (id),
  transaction_id text NOT NULL,
  delta numeric(38, 9) NOT NULL CHECK (delta <> 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX hold_changes_vault ON hold_changes (vault_id, created_at);

-- Spend aggregates for policies, maintained on every approval and release: one row per vault,
-- UTC day and MCC ('' for all merchants), plus one all-time row per vault and MCC (day NULL
-- is not a key, so all-time uses day '0001-01-01'). A weekly, monthly or yearly total sums at
-- most 7, 31 or 366 daily rows through the primary key; nothing scans transaction history.
CREATE TABLE spend_counters (
  vault_id text NOT NULL REFERENCES vaults (id),
  day date NOT NULL,
  mcc text NOT NULL,
  amount numeric(38, 9) NOT NULL DEFAULT 0 CHECK (amount >= 0),
  count integer NOT NULL DEFAULT 0 CHECK (count >= 0),
  PRIMARY KEY (vault_id, mcc, day)
);

CREATE TABLE policies (
  vault_id text PRIMARY KEY REFERENCES vaults (id),
  -- Increments on every set and survives a delete, so (vault, version) never names two
  -- different policies (compiled policies are cached by that pair).
  version integer NOT NULL CHECK (version > 0),
  document jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);

CREATE TABLE transfers (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  kind text NOT NULL CHECK (kind IN ('internal', 'external')),
  -- Where an external transfer's money waits: a hold on the vault, or (closing a vault to an
  -- address) the withdrawals system account, the vault being closed and empty already.
  source text NOT NULL DEFAULT 'hold' CHECK (source IN ('hold', 'withdrawal')),
  from_vault_id text NOT NULL REFERENCES vaults (id),
  to_vault_id text REFERENCES vaults (id),
  address text,
  amount numeric(38, 9) NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
  description text,
  memo text,
  signature text,
  failure_reason text,
  counterparty_account_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  CHECK ((kind = 'internal') = (to_vault_id IS NOT NULL)),
  CHECK ((kind = 'external') = (address IS NOT NULL))
);
CREATE INDEX transfers_owner ON transfers (account_id, mode, id DESC);
CREATE INDEX transfers_from ON transfers (from_vault_id, id DESC);
CREATE INDEX transfers_to ON transfers (to_vault_id, id DESC) WHERE to_vault_id IS NOT NULL;

CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  -- The whsec_ signing secret, encrypted under the master key.
  secret_enc text NOT NULL,
  created_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (account_id, mode, id DESC);

-- The outbox: events written in the transaction of the change they describe; relays claim
-- them with FOR UPDATE SKIP LOCKED and mark them relayed.
CREATE TABLE outbox_events (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  relayed_at timestamptz
);
CREATE INDEX outbox_events_unrelayed ON outbox_events (id) WHERE relayed_at IS NULL;

-- Idempotency records (contract section 5), written in the transaction of the effect.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  method text NOT NULL,
  path text NOT NULL,
  request_hash text NOT NULL,
  response_status integer NOT NULL,
  response_body jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, mode, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

-- End-of-day balances (UTC), written by the snapshot job from the ledger.
CREATE TABLE balance_snapshots (
  vault_id text NOT NULL REFERENCES vaults (id),
  day date NOT NULL,
  currency text NOT NULL,
  ledger numeric(38, 9) NOT NULL,
  pending numeric(38, 9) NOT NULL,
  available numeric(38, 9) NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (vault_id, day)
);
