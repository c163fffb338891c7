-- Three fewer index entries per transaction written (issue 11; docs/performance.md, "A quiet
-- machine, and the paced tail"): the indexes on (owner, id) of migration 0008 go, and every
-- read that used them reads the (owner, type, status, id) indexes instead, one range per
-- (type, status) merged by id: an unfiltered List Transactions in 24 ranges
-- (ops/transaction-list.ts, kindsOf), a backtest's batch in 4 or 8 (backtest-rows.ts).
--
-- Why: every authorization writes a transaction row, and each of its indexes is one more entry
-- to insert, one more relation to open and lock, and WAL to write, in the batch's one write.
-- Dropping these three cut the WAL of an authorization by about 13%, and the CPU of 7-11 us a
-- row that PostgreSQL spent on their entries; the lists they served now read the first row of
-- each of the other ranges beyond their page (about 1.4 ms more at 10,000,000 rows).
--
-- A large existing table: DROP INDEX takes the table's lock while it runs (brief, no rows are
-- read). Drop them beforehand with DROP INDEX CONCURRENTLY under the same names
-- (docs/operations.md); IF EXISTS then skips them here.
DROP INDEX IF EXISTS transactions_by_owner;
DROP INDEX IF EXISTS transactions_by_vault;
DROP INDEX IF EXISTS transactions_by_card;
