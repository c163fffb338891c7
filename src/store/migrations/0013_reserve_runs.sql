-- Reserves (issue 15, part 2): each reconciliation of the treasury on chain against what the
-- ledger owes, per mode and currency, with every term, so that the operator can show at any
-- moment (and afterwards) that the treasury covered the ledger. docs/reserves.md states the
-- formula; src/workers/reserves.ts computes it. Rows are kept 30 days (maintenance purges
-- older ones by id: ids are UUIDv7, so the primary key gives the oldest first).
--
-- Every amount is exact, in the currency's own unit (SOL, USDC), NUMERIC(38, 9) like every
-- amount: a treasury balance read in lamports or USDC base units converts exactly.
CREATE TABLE IF NOT EXISTS reserve_runs (
  id text PRIMARY KEY,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  currency text NOT NULL,
  ran_at timestamptz NOT NULL,
  -- Where the balance was read: the treasury's address (for USDC, its associated token
  -- account) and the slot of the read.
  treasury_address text NOT NULL,
  slot bigint NOT NULL CHECK (slot >= 0),
  -- The terms.
  treasury_balance numeric(38, 9) NOT NULL CHECK (treasury_balance >= 0),
  unswept_deposits numeric(38, 9) NOT NULL CHECK (unswept_deposits >= 0),
  owed numeric(38, 9) NOT NULL CHECK (owed >= 0),
  in_flight numeric(38, 9) NOT NULL CHECK (in_flight >= 0),
  in_flight_landed numeric(38, 9) NOT NULL CHECK (in_flight_landed >= 0),
  -- The in-flight transfers whose status was asked (at most 1,000; others count as not landed).
  in_flight_count integer NOT NULL CHECK (in_flight_count >= 0),
  -- reserves = treasury_balance + unswept_deposits; liabilities = owed - in_flight_landed.
  reserves numeric(38, 9) NOT NULL CHECK (reserves >= 0),
  liabilities numeric(38, 9) NOT NULL CHECK (liabilities >= 0),
  shortfall numeric(38, 9) NOT NULL CHECK (shortfall >= 0),
  -- reserves / liabilities rounded down to 9 places; 1 when nothing is owed.
  ratio numeric(38, 9) NOT NULL CHECK (ratio >= 0),
  short boolean NOT NULL,
  CHECK (in_flight_landed <= in_flight),
  CHECK (reserves = treasury_balance + unswept_deposits),
  CHECK (liabilities = owed - in_flight_landed),
  CHECK (short = (shortfall > 0)),
  CHECK (shortfall = greatest(liabilities - reserves, 0))
);
-- The latest run of each (mode, currency): what the transfer worker's wait and the CLI read.
CREATE INDEX IF NOT EXISTS reserve_runs_latest ON reserve_runs (mode, currency, id DESC);

-- Runs asked for now (`spendgate reserves --run`): a worker runs the reconciliation at its next
-- round (within a second) and deletes the requests it answered; the command waits for its row
-- to go. A request nobody answers is deleted by the command that made it when it gives up.
CREATE TABLE IF NOT EXISTS reserve_run_requests (
  id text PRIMARY KEY,
  requested_at timestamptz NOT NULL
);
