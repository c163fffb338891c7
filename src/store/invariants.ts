import type { SqlQueryable } from './sql/client.js';
import { ALL_TIME_DAY } from './spend.js';

/*
 * The ledger's invariants, as queries that list violations (empty lists mean all hold). Tests
 * run this after every step; an operator can run it against production at any time.
 */

export interface Violation {
  readonly invariant: string;
  readonly detail: string;
}

/**
 * A 0.00 account verification (contract v1.2, section 16) is approved and completed with
 * nothing held or spent: it counts in no spend window.
 */
const NOT_A_VERIFICATION = `NOT (type = 'card_authorization' AND amount = 0 AND captured_amount = 0)`;

const CHECKS: readonly { readonly invariant: string; readonly sql: string }[] = [
  {
    invariant: 'entries sum to zero per mode and currency',
    sql: `SELECT mode || ' ' || currency || ': ' || sum(amount) AS detail FROM ledger_entries
          GROUP BY mode, currency HAVING sum(amount) <> 0`,
  },
  {
    invariant: 'every posting sums to zero',
    sql: `SELECT posting_id || ': ' || sum(amount) AS detail FROM ledger_entries
          GROUP BY posting_id HAVING sum(amount) <> 0`,
  },
  {
    invariant: "a vault's ledger is the sum of its entries",
    sql: `SELECT v.id || ': ledger ' || v.ledger || ', entries ' || coalesce(e.total, 0) AS detail
          FROM vaults v LEFT JOIN (SELECT ledger_account_id, sum(amount) AS total FROM ledger_entries GROUP BY 1) e
            ON e.ledger_account_id = v.id
          WHERE v.ledger <> coalesce(e.total, 0)`,
  },
  {
    invariant: "a vault's pending is the sum of its open holds",
    sql: `SELECT v.id || ': pending ' || v.pending || ', holds ' || coalesce(h.total, 0) AS detail
          FROM vaults v LEFT JOIN (SELECT vault_id, sum(hold_remaining) AS total FROM transactions
                                   WHERE status = 'pending' GROUP BY 1) h ON h.vault_id = v.id
          WHERE v.pending <> coalesce(h.total, 0)`,
  },
  {
    invariant: "a vault's pending is the sum of its journaled hold changes",
    sql: `SELECT v.id || ': pending ' || v.pending || ', journal ' || coalesce(h.total, 0) AS detail
          FROM vaults v LEFT JOIN (SELECT vault_id, sum(delta) AS total FROM hold_changes GROUP BY 1) h
            ON h.vault_id = v.id
          WHERE v.pending <> coalesce(h.total, 0)`,
  },
  {
    // Contract v1.2, section 16: only a posting the network mandates overdraws a vault, and
    // the vault says so (context.ts, changeVaultTotals).
    invariant:
      'available is negative only while the vault is overdrawn, and overdrawn_at is set exactly then',
    sql: `SELECT id || ': available ' || (ledger - pending) || ', overdrawn_at ' || coalesce(overdrawn_at::text, 'null') AS detail
          FROM vaults WHERE (ledger - pending < 0) <> (overdrawn_at IS NOT NULL)`,
  },
  {
    invariant: 'a closed vault holds nothing',
    sql: `SELECT id AS detail FROM vaults WHERE status = 'closed' AND (ledger <> 0 OR pending <> 0)`,
  },
  {
    // What counts as spend: a card authorization's captured and still-held amounts while it is
    // pending or completed (captures above the hold and late captures included: the money left
    // the vault), a force capture's amount, and an external transfer's; one count each. A
    // refund gives nothing back (a limit's remaining amount never rises with one).
    invariant: 'all-time spend counters equal approved card spend and external transfers',
    sql: `SELECT v.id || ': counted ' || coalesce(c.amount, 0) || '/' || coalesce(c.count, 0)
                 || ', spent ' || coalesce(t.amount, 0) || '/' || coalesce(t.count, 0) AS detail
          FROM vaults v
          LEFT JOIN spend_counters c ON c.vault_id = v.id AND c.mcc = '' AND c.day = '${ALL_TIME_DAY}'
          LEFT JOIN (SELECT vault_id, sum(hold_remaining + captured_amount) AS amount, count(*) AS count
                     FROM transactions WHERE type IN ('card_authorization', 'force_capture', 'external_transfer')
                       AND status IN ('pending', 'completed') AND ${NOT_A_VERIFICATION}
                     GROUP BY 1) t ON t.vault_id = v.id
          WHERE coalesce(c.amount, 0) <> coalesce(t.amount, 0) OR coalesce(c.count, 0) <> coalesce(t.count, 0)`,
  },
  {
    // Card counters are kept exactly while the card has a policy (ops/card-policies.ts).
    invariant: "a card's all-time spend counters equal its approved spend while it has a policy",
    sql: `SELECT p.card_id || ': counted ' || coalesce(c.amount, 0) || '/' || coalesce(c.count, 0)
                 || ', spent ' || coalesce(t.amount, 0) || '/' || coalesce(t.count, 0) AS detail
          FROM card_policies p
          LEFT JOIN card_spend_counters c ON c.card_id = p.card_id AND c.mcc = '' AND c.day = '${ALL_TIME_DAY}'
          LEFT JOIN (SELECT card_id, sum(hold_remaining + captured_amount) AS amount, count(*) AS count
                     FROM transactions WHERE type IN ('card_authorization', 'force_capture')
                       AND status IN ('pending', 'completed') AND ${NOT_A_VERIFICATION}
                     GROUP BY 1) t ON t.card_id = p.card_id
          WHERE p.document IS NOT NULL
            AND (coalesce(c.amount, 0) <> coalesce(t.amount, 0) OR coalesce(c.count, 0) <> coalesce(t.count, 0))`,
  },
  {
    invariant: 'card spend counters exist only for cards with a policy',
    sql: `SELECT 'card spend counter ' || s.card_id || ' ' || s.mcc || ' ' || s.day AS detail
          FROM card_spend_counters s
          WHERE NOT EXISTS (SELECT 1 FROM card_policies p WHERE p.card_id = s.card_id AND p.document IS NOT NULL)`,
  },
  {
    // The authorize path's tables carry no foreign keys (migration 0007): this is their check.
    invariant:
      'every transaction, hold change, spend counter, event and unrelayed event names rows that exist',
    sql: `SELECT 'transaction ' || t.id AS detail FROM transactions t
          WHERE NOT EXISTS (SELECT 1 FROM vaults v WHERE v.id = t.vault_id AND v.account_id = t.account_id AND v.mode = t.mode)
             OR (t.card_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cards c WHERE c.id = t.card_id AND c.vault_id = t.vault_id))
          UNION ALL
          SELECT 'hold change ' || h.id FROM hold_changes h
          WHERE NOT EXISTS (SELECT 1 FROM vaults v WHERE v.id = h.vault_id)
             OR NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = h.transaction_id AND t.vault_id = h.vault_id)
          UNION ALL
          SELECT 'spend counter ' || s.vault_id || ' ' || s.mcc || ' ' || s.day FROM spend_counters s
          WHERE NOT EXISTS (SELECT 1 FROM vaults v WHERE v.id = s.vault_id)
          UNION ALL
          SELECT 'event ' || e.id FROM outbox_events e
          WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = e.account_id)
          UNION ALL
          SELECT 'unrelayed event ' || u.id FROM outbox_unrelayed u
          WHERE NOT EXISTS (SELECT 1 FROM outbox_events e WHERE e.id = u.id)
          UNION ALL
          SELECT 'transaction message ' || m.id FROM transaction_messages m
          WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = m.transaction_id)`,
  },
  {
    // Section 16: a linked refund credits a card transaction of its own card, and what linked
    // refunds credited is the original's refunded_amount (which may exceed its capture: a
    // refund the network sent is recorded, never refused).
    invariant: "a transaction's refunded amount is the sum of the refunds linked to it",
    sql: `SELECT t.id || ': refunded ' || t.refunded_amount || ', refunds ' || coalesce(r.total, 0) AS detail
          FROM transactions t LEFT JOIN (SELECT original_transaction_id, sum(amount) AS total FROM transactions
                                         WHERE type = 'refund' AND original_transaction_id IS NOT NULL GROUP BY 1) r
            ON r.original_transaction_id = t.id
          WHERE t.refunded_amount <> coalesce(r.total, 0)
          UNION ALL
          SELECT 'refund ' || r.id || ' names ' || r.original_transaction_id FROM transactions r
          WHERE r.type = 'refund' AND r.original_transaction_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = r.original_transaction_id
                              AND t.card_id = r.card_id AND t.type IN ('card_authorization', 'force_capture'))`,
  },
  {
    // A display token shows the card it names to its account alone (ops/card-display.ts).
    invariant: "every card display token is of its card's account and mode, and lives 60 seconds",
    sql: `SELECT 'card display token of ' || d.card_id || ' made ' || d.created_at AS detail
          FROM card_display_tokens d
          WHERE NOT EXISTS (SELECT 1 FROM cards c WHERE c.id = d.card_id AND c.account_id = d.account_id AND c.mode = d.mode)
             OR d.expires_at - d.created_at <> interval '60 seconds'
             OR (d.used_at IS NOT NULL AND (d.used_at < d.created_at OR d.used_at >= d.expires_at))`,
  },
  {
    // Issue 15: every deposit found on chain and credited is one completed deposit
    // transaction of its amount, and every deposit transaction from the chain (chain_deposit
    // set) is the credit of exactly one found transfer, of its signature.
    invariant: 'every credited chain deposit is exactly one completed deposit of its amount',
    sql: `SELECT 'chain deposit ' || d.id AS detail FROM chain_deposits d
          LEFT JOIN transactions t ON t.id = d.transaction_id
          WHERE d.status IN ('credited', 'swept')
            AND (t.id IS NULL OR t.type <> 'deposit' OR t.status <> 'completed'
                 OR t.amount <> d.amount OR t.vault_id <> d.vault_id)
          UNION ALL
          SELECT 'deposit transaction ' || t.id || ' from chain has no deposit of its signature'
          FROM transactions t
          WHERE t.chain_deposit IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM chain_deposits d WHERE d.transaction_id = t.id
                              AND d.signature = t.chain_deposit->>'signature')
          UNION ALL
          SELECT 'deposit transaction ' || transaction_id || ' credits ' || count(*) || ' deposits'
          FROM chain_deposits WHERE transaction_id IS NOT NULL
          GROUP BY transaction_id HAVING count(*) > 1
          UNION ALL
          SELECT 'chain deposit ' || signature || '/' || instruction_index || '/' || inner_index
                 || ' recorded ' || count(*) || ' times'
          FROM chain_deposits GROUP BY signature, instruction_index, inner_index HAVING count(*) > 1`,
  },
];

/** Checks and returns the first violations of each invariant (at most 10 each). */
export async function checkInvariants(db: SqlQueryable): Promise<Violation[]> {
  const violations: Violation[] = [];
  for (const check of CHECKS) {
    const { rows } = await db.query<{ detail: string }>(`${check.sql} LIMIT 10`);
    for (const row of rows) violations.push({ invariant: check.invariant, detail: row.detail });
  }
  return violations;
}
