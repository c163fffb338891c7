-- History at scale (issue 19): every filter of List Transactions answered from an index that
-- holds the rows it asks for in the order it lists them, and what the retention jobs of
-- src/workers/maintenance.ts need to delete old rows without scanning tables.
--
-- A large existing table: every CREATE INDEX below blocks writes to its table while it builds
-- (minutes for millions of rows). Build them beforehand with CREATE INDEX CONCURRENTLY under
-- the same names (docs/operations.md lists the statements); IF NOT EXISTS then skips them here.

-- Lists order by `id COLLATE "C"`: UUIDv7 ids in hex sort by time under any collation, but
-- only indexes built on the C collation can give that order. The primary key (default
-- collation) therefore never offers the planner a walk of the whole table by id with the
-- filters applied row by row: a filter that matches little in a busy vault walked millions
-- of rows that way (issue 19). These three replace the default-collation indexes of 0001.
CREATE INDEX IF NOT EXISTS transactions_by_owner ON transactions (account_id, mode, id COLLATE "C" DESC);
CREATE INDEX IF NOT EXISTS transactions_by_vault ON transactions (vault_id, id COLLATE "C" DESC);
CREATE INDEX IF NOT EXISTS transactions_by_card ON transactions (card_id, id COLLATE "C" DESC)
  WHERE card_id IS NOT NULL;
DROP INDEX IF EXISTS transactions_owner;
DROP INDEX IF EXISTS transactions_vault;
DROP INDEX IF EXISTS transactions_card;

-- Type and status as equality columns before the id: a status or type filter reads only the
-- rows it lists. A filter on one of the two reads one range per value of the other (6 types,
-- 4 statuses), merged by id (ops/transaction-list.ts).
CREATE INDEX IF NOT EXISTS transactions_by_owner_kind
  ON transactions (account_id, mode, type, status, id COLLATE "C" DESC);
CREATE INDEX IF NOT EXISTS transactions_by_vault_kind
  ON transactions (vault_id, type, status, id COLLATE "C" DESC);
CREATE INDEX IF NOT EXISTS transactions_by_card_kind
  ON transactions (card_id, type, status, id COLLATE "C" DESC) WHERE card_id IS NOT NULL;

-- Amount ranges that match little: every matching row, found by amount (then the newest by
-- id). Ranges that match much are answered by walking the id order instead.
CREATE INDEX IF NOT EXISTS transactions_by_vault_amount ON transactions (vault_id, amount, id);
CREATE INDEX IF NOT EXISTS transactions_by_owner_amount ON transactions (account_id, mode, amount, id);

-- Date ranges become id ranges: an id starts with its millisecond, and every writer stamps
-- created_at with the millisecond its id was made for. Not quite always: an id never goes
-- back in time (ids.ts), so a clock stepped back, or a counter that ran over, writes an id
-- ahead of its created_at, and rows may be written by hand. Those rows, "unaligned", are few
-- (normally none), and this index holds exactly them, so a date filter stays exact. The
-- expression is repeated verbatim in ops/transaction-list.ts (UNALIGNED_SQL): the planner uses
-- the index only for a query that states its predicate; the statistics tell it how few rows
-- that is (without them it would guess half the table).
CREATE INDEX IF NOT EXISTS transactions_unaligned ON transactions (created_at)
  WHERE (left(id, 16) <> 'txn_' || lpad(to_hex(floor(extract(epoch FROM created_at - timestamptz 'epoch') * 1000)::bigint), 12, '0')) IS TRUE;
CREATE STATISTICS IF NOT EXISTS transactions_unaligned_share
  ON ((left(id, 16) <> 'txn_' || lpad(to_hex(floor(extract(epoch FROM created_at - timestamptz 'epoch') * 1000)::bigint), 12, '0')))
  FROM transactions;

-- An external transfer's held transaction is found by its transfer (ops/external-transfers.ts),
-- which read the whole table without an index. Card authorizations have no transfer: no entry.
CREATE INDEX IF NOT EXISTS transactions_transfer ON transactions (transfer_id)
  WHERE transfer_id IS NOT NULL;

-- Retention (src/store/ops/retention.ts). Daily spend counters older than any policy window
-- are deleted by day. An approval's upsert changes no indexed column, so it stays a HOT
-- update; the index gains an entry once per vault, MCC and day.
CREATE INDEX IF NOT EXISTS spend_counters_day ON spend_counters (day);
-- Deleting an old event checks that no delivery attempt still refers to it (the foreign key
-- of 0002): without this index, a scan of every delivery for each event deleted.
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);

-- The statistics of the new expression, so that the first plans after this migration know it.
ANALYZE transactions;
