-- Hosted card display (issue 18): the single-use tokens of GET /card-display, and the origins
-- each account lets frame that page.
--
-- A token is never stored: only its SHA-256 (hex), so that a read of this table shows no
-- card. It is bound to one card of one account and mode, lives 60 seconds, and is spent by the
-- one statement that reads it (UPDATE ... WHERE used_at IS NULL AND expires_at > now
-- RETURNING), so two loads of the page can never both show the card. The maintenance run
-- deletes spent and expired tokens (store/ops/retention.ts).
CREATE TABLE IF NOT EXISTS card_display_tokens (
  token_sha256 text PRIMARY KEY CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
  card_id text NOT NULL REFERENCES cards (id),
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (expires_at > created_at)
);
-- The purge's work list, oldest expiry first.
CREATE INDEX IF NOT EXISTS card_display_tokens_expiry ON card_display_tokens (expires_at);

-- The origins allowed to frame the card display page of an account in a mode (its CSP
-- frame-ancestors): a bounded list of https origins (loopback http too, in test mode).
-- No row, or an empty list: no page may frame it (frame-ancestors 'none').
CREATE TABLE IF NOT EXISTS card_display_origins (
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  origins text[] NOT NULL CHECK (cardinality(origins) <= 20),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, mode)
);
