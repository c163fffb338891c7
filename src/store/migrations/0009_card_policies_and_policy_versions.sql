-- Card-level policies, spend counters per card, and the history of every policy change.
--
-- A card may have a policy of its own, in the vault policy's format (contract section 11): an
-- authorization must pass the vault's policy and then the card's. Its limits and spend facts
-- count the card's own approved spend, kept in card_spend_counters exactly as spend_counters
-- keeps a vault's (one row per card, UTC day and MCC, '' for all merchants, plus the all-time
-- rows on day 0001-01-01), in the transaction of each approval and release.
--
-- Card counters are kept only while the card has a policy: a card without one costs the
-- authorize path no write (src/store/ops/card-policies.ts). Setting a card's first policy
-- (or one after a delete) fills its counters from the card's authorizations, under the lock
-- of its vault, which every writer of the counters holds; deleting the policy deletes them.
CREATE TABLE card_policies (
  card_id text PRIMARY KEY REFERENCES cards (id),
  -- Increments on every change (set, delete, restore) and survives a delete, so (card,
  -- version) never names two documents: compiled policies are cached by that pair.
  version integer NOT NULL CHECK (version > 0),
  document jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);

-- Written on the authorize path: no foreign key (migration 0007 says why);
-- src/store/invariants.ts checks that each row is of a card whose policy is set, and that the
-- all-time rows equal the card's approved spend.
CREATE TABLE card_spend_counters (
  card_id text NOT NULL,
  day date NOT NULL,
  mcc text NOT NULL,
  amount numeric(38, 9) NOT NULL DEFAULT 0 CHECK (amount >= 0),
  count integer NOT NULL DEFAULT 0 CHECK (count >= 0),
  PRIMARY KEY (card_id, mcc, day)
);
-- Retention deletes daily rows older than any policy window by day (ops/retention.ts).
CREATE INDEX card_spend_counters_day ON card_spend_counters (day);

-- Every change of a vault's or a card's policy, newest version last: Set, Delete and Restore
-- each add one row, numbered by the policy's version after the change. `owner_id` is the
-- vault's or the card's id (their prefixes tell them apart; both are unique). `key_id` is the
-- API key that made the change (its id, never the key); null when made without one (the
-- store called directly, or a change older than this table). Kept whole, like the ledger: a
-- row is only ever added, by a policy change through the API.
CREATE TABLE policy_versions (
  owner_id text NOT NULL,
  version integer NOT NULL CHECK (version > 0),
  change text NOT NULL CHECK (change IN ('set', 'delete', 'restore')),
  document jsonb,
  restored_from integer CHECK (restored_from > 0),
  key_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (owner_id, version),
  CHECK ((change = 'delete') = (document IS NULL)),
  CHECK ((change = 'restore') = (restored_from IS NOT NULL))
);

-- The vault policies that exist already keep their current version as their first history
-- row; what they were before is not known. (A deleted one is recorded as the delete it was.)
INSERT INTO policy_versions (owner_id, version, change, document, restored_from, key_id, created_at)
SELECT vault_id, version, CASE WHEN document IS NULL THEN 'delete' ELSE 'set' END, document,
       NULL, NULL, updated_at
FROM policies;
