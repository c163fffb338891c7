-- The Solana worker's record of an external transfer's on-chain transaction (issue 7), written
-- before the first send: after a crash the same bytes are sent again and the same signature
-- polled, so a transfer is never sent twice. Re-signing (a new blockhash) replaces the record
-- only once the old blockhash has expired with its signature unknown to the chain.
CREATE TABLE transfer_chain_sends (
  transfer_id text PRIMARY KEY REFERENCES transfers (id),
  -- The signed transaction, base64: exactly the bytes sent.
  signed_transaction text NOT NULL,
  signature text NOT NULL,
  last_valid_block_height bigint NOT NULL CHECK (last_valid_block_height > 0),
  -- How many times the transfer was signed: 1, plus one per expired blockhash.
  signings integer NOT NULL DEFAULT 1 CHECK (signings BETWEEN 1 AND 100),
  signed_at timestamptz NOT NULL
);
CREATE INDEX transfers_external_pending ON transfers (id) WHERE kind = 'external' AND status = 'pending';
