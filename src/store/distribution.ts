/**
 * The distribution plan (docs/scaling.md): where each table's rows would live once one
 * PostgreSQL primary is not enough, on a sharded PostgreSQL (Citus: a coordinator and worker
 * nodes; hash-distributed tables whose shards of one colocation group sit together, reference
 * tables copied to every node). Nothing at run time reads it: it is the plan, kept true by
 * test/store/distribution-plan.test.ts, which fails when a table of the schema is not placed
 * here, when a distribution column named here is missing (or one marked `toAdd` appears), or
 * when a statement of the authorize batch reads a distributed table without its distribution
 * column and is not one of the gaps listed in HOT_PATH_GAPS.
 */

/**
 * Tables whose rows go together: every table of a group is distributed by the same key's
 * values, so that the rows of one key (one vault) are on one node and a statement or a
 * transaction on that key runs on that node alone.
 */
export type Colocation = 'vault' | 'account' | 'settlement' | 'display_token';

export type Placement =
  | {
      readonly kind: 'distributed';
      readonly column: string;
      readonly colocation: Colocation;
      /**
       * The column does not exist yet: what it would hold, added (and filled) before the
       * table is distributed. Absent: the column exists today.
       */
      readonly toAdd?: string;
    }
  /** Copied to every node: small, read on many paths, written rarely. */
  | { readonly kind: 'reference' }
  /** The coordinator's own: never on a request's path. */
  | { readonly kind: 'local' };

const byVault = (column: string, toAdd?: string): Placement => ({
  kind: 'distributed',
  column,
  colocation: 'vault',
  ...(toAdd === undefined ? {} : { toAdd }),
});
const REFERENCE: Placement = { kind: 'reference' };
const LOCAL: Placement = { kind: 'local' };

/** Every table of the schema (migrations 0001 to 0020, and the runner's own). */
export const DISTRIBUTION: Readonly<Record<string, Placement>> = {
  // A vault's state and history: the authorize path's rows.
  vaults: byVault('id'),
  cards: byVault('vault_id'),
  transactions: byVault('vault_id'),
  hold_changes: byVault('vault_id'),
  // A transaction's timeline of lifecycle messages (migration 0019), with its transaction.
  transaction_messages: byVault('vault_id', "its transaction's vault"),
  spend_counters: byVault('vault_id'),
  policies: byVault('vault_id'),
  balance_snapshots: byVault('vault_id'),
  backtests: byVault('vault_id'),
  chain_deposits: byVault('vault_id'),
  deposit_watch: byVault('vault_id'),
  // A vault's ledger account shares the vault's id; the system accounts (40 rows, no balance
  // kept on them) hash wherever their id falls and are read only by reports.
  ledger_accounts: byVault('id'),
  ledger_entries: byVault('vault_id', "the posting's vault: both entries of a posting with it"),
  // The paying vault's; an internal transfer's receiving side is on another node.
  transfers: byVault('from_vault_id'),
  transfer_chain_sends: byVault('vault_id', "the transfer's paying vault"),
  deposit_sweeps: byVault('vault_id', "the deposit's vault"),
  card_policies: byVault('vault_id', "the card's vault"),
  card_spend_counters: byVault('vault_id', "the card's vault"),
  policy_versions: byVault('vault_id', "the vault, or the card's vault for a card's policy"),
  // Events are written in the transaction that makes them: with the vault they are about (the
  // account's id for an event about no vault, hashed alike); the relay reads every node.
  outbox_events: byVault('shard_key', "the event's vault id, or its account's id for none"),
  outbox_unrelayed: byVault('shard_key', "its event's shard key"),
  // An account's own, many rows, one account at a time.
  idempotency_keys: { kind: 'distributed', column: 'account_id', colocation: 'account' },
  webhook_deliveries: { kind: 'distributed', column: 'account_id', colocation: 'account' },
  // What is still owed to each endpoint (migration 0018): with the event's account.
  webhook_deliveries_owed: {
    kind: 'distributed',
    column: 'account_id',
    colocation: 'account',
    toAdd: "the event's account id",
  },
  settlements: { kind: 'distributed', column: 'id', colocation: 'settlement' },
  // With the authorization each captures: a record and its capture on one node.
  settlement_records: byVault('vault_id', "the authorization's, or the card's, vault"),
  card_display_tokens: {
    kind: 'distributed',
    column: 'token_sha256',
    colocation: 'display_token',
  },
  // Read on every request or by every worker, written rarely.
  accounts: REFERENCE,
  api_keys: REFERENCE,
  webhook_endpoints: REFERENCE,
  // Read by id alone (a processor's message names no account until its connection is read).
  processor_connections: REFERENCE,
  card_display_origins: REFERENCE,
  installation: REFERENCE,
  deposit_seed: REFERENCE,
  snapshot_days: REFERENCE,
  // The operator's, one row an hour at most.
  reserve_runs: LOCAL,
  reserve_run_requests: LOCAL,
  schema_migrations: LOCAL,
};

/**
 * A read of the authorize batch that does not filter a distributed table by its distribution
 * column today: what must change before the tables are distributed (docs/scaling.md). Known
 * by the table and a phrase of the statement's text; the test fails when one is found that
 * is not listed, and when one listed is no longer found (fixed: take it off the list).
 */
export interface HotPathGap {
  readonly table: string;
  readonly statement: string;
  readonly why: string;
  readonly change: string;
}

const LOCK = 'FROM cards c JOIN vaults v ON v.id = c.vault_id';

export const HOT_PATH_GAPS: readonly HotPathGap[] = [
  {
    table: 'cards',
    statement: LOCK,
    why: 'a request names its card, not its vault: the lock finds the cards by id on every node',
    change:
      "the vaults first: from the process's card-to-vault map (AuthorizeContext.cardVaults), and on a miss from card_vaults (card id to vault id, distributed by card id: one node); then the lock reads cards by vault_id = ANY($vaults) AND id = ANY($cards)",
  },
  {
    table: 'vaults',
    statement: LOCK,
    why: 'the vaults are locked through the join on the cards, which are read by card id',
    change: 'the lock names the vaults: v.id = ANY($vaults), each batch of one node (below)',
  },
  {
    table: 'transactions',
    statement: "account_id || ' ' || mode || ' ' || network_transaction_id = n.key",
    why: 'a networkTransactionId is unique in its account and mode across all its vaults (contract section 5): the unique index cannot hold on a table distributed by vault',
    change:
      'authorization_keys (the repeat key, the first transaction and its vault), distributed by the repeat key, written in the batch: a second node in its transaction (two-phase commit) unless placed with the vault; or, if the key is narrowed to the card, the lookup gains vault_id = ANY($vaults)',
  },
  {
    table: 'transactions',
    statement: 'FROM transactions WHERE id = $1',
    why: "a repeat's first decision is read by its transaction id (its scope checked on the row read, sql/scoped-row.ts)",
    change: "AND vault_id = $4: the key lookup answers the first decision's vault with its id",
  },
  {
    table: 'card_policies',
    statement: 'FROM card_policies WHERE card_id = ANY',
    why: 'a card policy is keyed by its card alone',
    change: 'vault_id added (DISTRIBUTION), and the read gains vault_id = ANY($vaults)',
  },
  {
    table: 'card_spend_counters',
    statement: 'FROM card_spend_counters',
    why: "a card's counters are keyed by its card alone",
    change: 'vault_id added (DISTRIBUTION), and the reads gain vault_id = w.vault_id',
  },
];
