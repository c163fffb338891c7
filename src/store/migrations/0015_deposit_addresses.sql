-- Deposit addresses, the deposit watcher's cursors and the sweeps (issue 15, part 1).
--
-- A vault's deposit address is the public key of a keypair derived from one random seed per
-- installation (src/store/deposit-keys.ts): Keypair.fromSeed(first 32 bytes of
-- HMAC-SHA512(seed, vault id)). The address is public and stored in clear on the vault; the
-- seed is stored only encrypted under the master key (like the webhook secrets), and
-- `spendgate keys rotate-master` re-encrypts it: the addresses never change with the master key.
-- NULL for a vault made before this migration until the watcher gives it its address.
ALTER TABLE vaults ADD COLUMN IF NOT EXISTS deposit_address text;
CREATE UNIQUE INDEX IF NOT EXISTS vaults_deposit_address ON vaults (deposit_address)
  WHERE deposit_address IS NOT NULL;
-- The vaults still without an address: the watcher's backfill list.
CREATE INDEX IF NOT EXISTS vaults_without_deposit_address ON vaults (id) WHERE deposit_address IS NULL;

-- A deposit credited from the chain says where it came from: {signature, sender, slot} (the
-- rest of its record is its chain_deposits row). NULL for every other transaction; a nullable
-- column without a default changes only the catalogue, whatever the table's size.
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS chain_deposit jsonb;

-- One row, ever (a unique index on a constant), made by the first process that needs it.
CREATE TABLE IF NOT EXISTS deposit_seed (
  id text PRIMARY KEY,
  -- 32 random bytes, hex, encrypted under the master key (AAD: 'deposit-seed:' || id).
  seed_enc text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS deposit_seed_one_row ON deposit_seed ((true));

-- What the watcher follows: each deposit address, and for a USDC vault also its associated
-- token account (where USDC arrives). The cursor is the newest signature whose transfers are
-- all recorded; a walk through more signatures than one pass reads goes back from the newest
-- (walk_top) page by page (walk_before), and becomes the cursor once it reaches the old one.
-- Re-reading a signature is harmless: chain_deposits' unique key refuses a second row.
CREATE TABLE IF NOT EXISTS deposit_watch (
  address text PRIMARY KEY,
  vault_id text NOT NULL REFERENCES vaults (id),
  -- The vault's deposit address (the owner of `address` when it is a token account).
  owner_address text NOT NULL,
  cursor_signature text,
  walk_top_signature text,
  walk_before_signature text,
  scanned_at timestamptz,
  CHECK ((walk_top_signature IS NULL) = (walk_before_signature IS NULL))
);
CREATE INDEX IF NOT EXISTS deposit_watch_by_scan ON deposit_watch (scanned_at NULLS FIRST, address);

-- A sweep moves one credited deposit from its vault's address into the treasury. Like an
-- external transfer (migration 0004), its signed bytes, signature and lastValidBlockHeight are
-- recorded before the first send, and a new signing replaces them only once the old blockhash
-- has expired with the signature unknown (conditional on the old signature).
CREATE TABLE IF NOT EXISTS deposit_sweeps (
  deposit_id text PRIMARY KEY REFERENCES chain_deposits (id),
  signed_transaction text NOT NULL,
  signature text NOT NULL,
  last_valid_block_height bigint NOT NULL CHECK (last_valid_block_height > 0),
  signings integer NOT NULL DEFAULT 1 CHECK (signings BETWEEN 1 AND 100),
  signed_at timestamptz NOT NULL,
  -- Set when the sweep landed (with chain_deposits.status = 'swept', same transaction).
  confirmed_at timestamptz,
  -- A sweep that failed on chain: the deposit stays credited at its address, for an operator.
  failed_reason text
);
