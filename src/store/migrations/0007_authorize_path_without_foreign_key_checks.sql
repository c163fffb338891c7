-- The authorize path writes, per authorization, a transaction, a hold change, spend counters
-- and an event. Their foreign keys to accounts, vaults and cards were checked row by row by
-- triggers (one lookup and one key-share lock per key per row): measured, about a quarter of
-- PostgreSQL's CPU per authorization (docs/performance.md), to prove what the writer already
-- holds. Every such row is written in the transaction that locked or read its vault and card
-- (ops/authorize-batch.ts, ops/authorizations.ts, ops/vaults.ts, ops/transfers.ts), so the
-- referenced rows exist at commit; and they can never vanish afterwards, because accounts,
-- vaults and cards are never deleted (closed or cancelled instead) and the triggers below
-- refuse any DELETE or TRUNCATE of them. src/store/invariants.ts checks for orphans as it
-- checks the ledger, so a writer that ever broke this would be caught by every test.
ALTER TABLE transactions DROP CONSTRAINT transactions_account_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT transactions_vault_id_fkey;
ALTER TABLE transactions DROP CONSTRAINT transactions_card_id_fkey;
ALTER TABLE hold_changes DROP CONSTRAINT hold_changes_vault_id_fkey;
ALTER TABLE spend_counters DROP CONSTRAINT spend_counters_vault_id_fkey;
ALTER TABLE outbox_events DROP CONSTRAINT outbox_events_account_id_fkey;

CREATE FUNCTION spendgate_never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are never deleted: close or cancel them instead', TG_TABLE_NAME;
END;
$$;
CREATE TRIGGER accounts_never_deleted BEFORE DELETE OR TRUNCATE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION spendgate_never_deleted();
CREATE TRIGGER vaults_never_deleted BEFORE DELETE OR TRUNCATE ON vaults
  FOR EACH STATEMENT EXECUTE FUNCTION spendgate_never_deleted();
CREATE TRIGGER cards_never_deleted BEFORE DELETE OR TRUNCATE ON cards
  FOR EACH STATEMENT EXECUTE FUNCTION spendgate_never_deleted();
