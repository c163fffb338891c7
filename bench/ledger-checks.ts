import { checkInvariants } from '../src/store/invariants.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import type { SqlClient } from '../src/store/sql/client.js';

/**
 * The authorize benches' checks after a run (bench:http, bench:fleet): the ledger invariants,
 * no vault below zero, and the decisions stored equal to those answered plus those of the
 * requests never answered (cut off when a workload stopped). Prints one line per check.
 */

/** What the bench's clients saw: decisions answered, and the ids sent but never answered. */
export interface Answered {
  readonly approved: number;
  readonly declined: number;
  readonly unanswered: readonly string[];
}

export const hold = (ok: boolean) => (ok ? 'hold  ' : 'BROKEN');

/** Runs the checks on the database; `ledgerHolds` and `countsAgree` false when one is broken. */
export async function checkLedger(
  databaseUrl: string,
  answered: Answered,
): Promise<{ readonly ledgerHolds: boolean; readonly countsAgree: boolean }> {
  const { approved, declined, unanswered } = answered;
  const client = createPgClient({ connectionString: databaseUrl, connectionsMax: 2 });
  try {
    const ledgerHolds = await ledgerChecks(client);
    const countQuery = `SELECT count(*) FILTER (WHERE status = 'pending') AS approved,
        count(*) FILTER (WHERE status = 'declined') AS declined
      FROM transactions WHERE type = 'card_authorization'`;
    const { rows: stored } = await client.query<{ approved: string; declined: string }>(countQuery);
    const { rows: late } = await client.query<{ approved: string; declined: string }>(
      `${countQuery} AND network_transaction_id = ANY($1)`,
      [unanswered],
    );
    const dbApproved = Number(stored[0]?.approved ?? -1);
    const dbDeclined = Number(stored[0]?.declined ?? -1);
    const lateApproved = Number(late[0]?.approved ?? -1);
    const lateDeclined = Number(late[0]?.declined ?? -1);
    const countsAgree =
      dbApproved === approved + lateApproved && dbDeclined === declined + lateDeclined;
    console.log(
      `${hold(countsAgree)} approvals in the database ${dbApproved} = ${approved} approved answers + ${lateApproved} approved of the ${unanswered.length} never answered (cut off when a workload stopped)`,
    );
    console.log(
      `${hold(countsAgree)} declines in the database ${dbDeclined} = ${declined} declined answers + ${lateDeclined} never answered`,
    );
    return { ledgerHolds, countsAgree };
  } finally {
    await client.close();
  }
}

/**
 * The ledger invariants and the balances alone, for runs whose messages are not all
 * authorizations (bench/extra-workloads.ts counts those its own way); false when one is broken.
 */
export async function checkLedgerInvariants(databaseUrl: string): Promise<boolean> {
  const client = createPgClient({ connectionString: databaseUrl, connectionsMax: 2 });
  try {
    return await ledgerChecks(client);
  } finally {
    await client.close();
  }
}

async function ledgerChecks(client: SqlClient): Promise<boolean> {
  const violations = await checkInvariants(client);
  const { rows: balances } = await client.query<{ negative: string; least: string }>(
    // Below zero only where a posting the network mandates put it (contract v1.2, section 16):
    // such a vault is overdrawn (overdrawn_at set); no decision of spendgate's ever may.
    `SELECT count(*) FILTER (WHERE ledger - pending < 0 AND overdrawn_at IS NULL) AS negative,
       min(ledger - pending) AS least FROM vaults`,
  );
  const negative = Number(balances[0]?.negative ?? -1);
  console.log(
    `${hold(violations.length === 0)} ledger invariants (src/store/invariants.ts)${violations.map((violation) => `\n  ${violation.invariant}: ${violation.detail}`).join('')}`,
  );
  console.log(
    `${hold(negative === 0)} no vault below zero available but by a mandated posting (${negative} negative and not overdrawn, least ${balances[0]?.least ?? '?'})`,
  );
  return violations.length === 0 && negative === 0;
}
