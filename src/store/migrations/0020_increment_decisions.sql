-- Increments (contract v1.2, section 16; issue 34): each is decided as an authorization of its
-- own amount, and its networkTransactionId is its idempotency key. Its message on the
-- transaction's timeline keeps the decision, so a repeat answers what was recorded, declines
-- included; the key is unique per authorization, where the network's id is unique.
ALTER TABLE transaction_messages ADD COLUMN IF NOT EXISTS decision jsonb;
CREATE UNIQUE INDEX IF NOT EXISTS transaction_messages_increment_key
  ON transaction_messages (transaction_id, network_transaction_id)
  WHERE kind = 'increment';
