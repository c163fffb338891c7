-- A capture's own rate (contract v1.2, section 16: "the capture converts at its own time's
-- price"; issue 35). A capture of an authorization that was converted at a price converts its
-- billing amount again at the price in memory when it posts, which may differ from the
-- authorization's: its message on the transaction's timeline records what it captured in the
-- billing currency and the rate it used, in the transaction's `rate` form ({value, source, at,
-- feeds}). Null for every other message, and for a capture that was not converted (in the
-- asset, at par, or a later capture of a split shipment that takes the remaining hold as it is).
ALTER TABLE transaction_messages
  ADD COLUMN IF NOT EXISTS billing_amount numeric(38, 9) CHECK (billing_amount >= 0),
  ADD COLUMN IF NOT EXISTS billing_currency text,
  ADD COLUMN IF NOT EXISTS rate jsonb;

-- Limits written in a billing currency (issue 35) count the billing amounts of approvals, in
-- spend counter rows keyed by the currency (src/store/spend.ts, billingMcc). Whether an
-- approval's billing amount went into those rows: a release of the whole authorization takes
-- back exactly what was added, and nothing for holds placed another way (advice, which no
-- policy decided). False on every older row: none was counted.
ALTER TABLE transactions ADD COLUMN IF NOT EXISTS billing_counted boolean NOT NULL DEFAULT false;
