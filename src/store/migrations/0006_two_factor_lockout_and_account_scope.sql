-- Contract v1.1, section 2: the two-factor lockout and the scope account:write.

-- The times (epoch ms) of an account's latest wrong two-factor codes, at most the 5 that the
-- lockout counts, oldest first. Kept on the account row, which every two-factor check locks,
-- so that every process sees one count (a Redis outage cannot reset it) and the read, the
-- check and the write of a count happen under one row lock: parallel guesses cannot slip
-- past it.
ALTER TABLE accounts
  ADD COLUMN two_factor_failed_at_ms bigint[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(two_factor_failed_at_ms) <= 5);

-- Before v1.1 the two-factor routes took any key. A key that holds all eleven v1.0 scopes was
-- made to do everything (with no --scopes, or listing them all), two-factor enrolment
-- included, so it keeps that power with the new scope. A narrower key (such as the card
-- network's, authorizations:write alone) was never meant to manage two-factor and does not
-- get it: least privilege.
UPDATE api_keys
   SET scopes = array_append(scopes, 'account:write')
 WHERE scopes @> ARRAY['vaults:read', 'vaults:write', 'cards:read', 'cards:write',
                       'cards:reveal', 'transactions:read', 'transactions:metadata',
                       'policies:write', 'transfers:write', 'webhooks:write',
                       'authorizations:write']::text[]
   AND NOT scopes @> ARRAY['account:write']::text[];
