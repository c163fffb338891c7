-- The card network's id as one key (issue 11): the index that makes an authorization's
-- networkTransactionId its idempotency key (contract section 5) on one expression, the key the
-- authorize batch already builds, instead of three columns.
--
-- Why: the batch looks each request's key up before deciding (ops/decide-and-record.ts,
-- readAfterLock). On three columns, account_id and mode are also the leading columns of the
-- owner's history indexes (migration 0008), and while the table had no statistics (a new
-- database, or one growing faster than autovacuum analyses it) the generic plan costed them
-- the same and took one of them: it read every transaction of the account to find none, a
-- lookup that grew with the history. No other index holds this expression, so the lookup
-- probes this one, whatever the statistics say. The key is injective: account ids and modes
-- contain no space.
--
-- A large existing table: build it beforehand with CREATE UNIQUE INDEX CONCURRENTLY under the
-- same name (docs/operations.md); IF NOT EXISTS then skips it here.
CREATE UNIQUE INDEX IF NOT EXISTS transactions_network_key
  ON transactions ((account_id || ' ' || mode || ' ' || network_transaction_id))
  WHERE network_transaction_id IS NOT NULL;
DROP INDEX IF EXISTS transactions_network_id;

-- Spend counters by age, for retention only. The index on `day` (0008, 0009) served the hot
-- path's window condition too (`day BETWEEN first AND last`, spend-window.ts): once analysed,
-- the generic plan preferred it to the primary key and read every vault's counters of the
-- window to keep the batch's own. An index on the day's number, which only the retention's
-- statements name, leaves the hot path the primary key (vault or card, MCC, day).
CREATE INDEX IF NOT EXISTS spend_counters_age ON spend_counters ((day - DATE '0001-01-01'));
DROP INDEX IF EXISTS spend_counters_day;
CREATE INDEX IF NOT EXISTS card_spend_counters_age ON card_spend_counters ((day - DATE '0001-01-01'));
DROP INDEX IF EXISTS card_spend_counters_day;
