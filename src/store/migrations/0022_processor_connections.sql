-- Processor connections (contract v1.2, section 17; issue 36). A card program's processor
-- (Stripe Issuing, Lithic, Marqeta) calls spendgate at /v1/processors/<processor>/<id>; the
-- connection names the account and mode its messages act for, and keeps the secrets that
-- verify them, encrypted under the master key (AAD `processor-secrets:<id>`), like webhook
-- signing secrets. A rotation keeps the previous secrets until `previous_until`, so messages
-- signed with either verify while the processor's side is switched over.
CREATE TABLE IF NOT EXISTS processor_connections (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  processor text NOT NULL CHECK (processor IN ('stripe', 'lithic', 'marqeta')),
  -- NULL once deleted: nothing verifies any more.
  secrets_enc text,
  previous_secrets_enc text,
  previous_until timestamptz,
  created_at timestamptz NOT NULL,
  rotated_at timestamptz,
  -- Kept as a row once deleted, so a message naming it is told processor_not_found.
  deleted_at timestamptz,
  CHECK ((previous_secrets_enc IS NULL) = (previous_until IS NULL)),
  CHECK (secrets_enc IS NOT NULL OR deleted_at IS NOT NULL)
);
CREATE INDEX IF NOT EXISTS processor_connections_owner
  ON processor_connections (account_id, mode, id DESC)
  WHERE deleted_at IS NULL;

-- A card tied to the processor's card (processorCard {connectionId, cardId}): the adapter
-- finds the card of a message by the processor's card id, unique per connection.
ALTER TABLE cards ADD COLUMN IF NOT EXISTS processor_connection_id text;
ALTER TABLE cards ADD COLUMN IF NOT EXISTS processor_card_id text;
ALTER TABLE cards DROP CONSTRAINT IF EXISTS cards_processor_card_whole;
ALTER TABLE cards ADD CONSTRAINT cards_processor_card_whole
  CHECK ((processor_connection_id IS NULL) = (processor_card_id IS NULL));
CREATE UNIQUE INDEX IF NOT EXISTS cards_processor_card
  ON cards (processor_connection_id, processor_card_id)
  WHERE processor_connection_id IS NOT NULL;
