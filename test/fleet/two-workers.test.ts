import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { recipientBalance } from '../../src/solana/transfers.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { networkId } from '../support/authorize.js';
import {
  authorizationBody,
  fleetAccount,
  fundedVaultCard,
  allWorkDone,
  receivedIds,
  type FleetAccount,
  subscribe,
  useFleet,
  type FleetEngines,
} from '../support/fleet.js';
import { scrape } from '../support/metrics.js';
import type { Receiver } from '../support/receiver.js';
import type { Outcome } from '../support/round-robin.js';

/**
 * Two worker processes on one database and one Redis prefix, both running from the start:
 * two outbox relays, two webhook delivery workers, two settlement workers and two Solana
 * transfer workers, each pair racing for the same work. Against an endpoint that answers
 * every delivery with 200 (so no retry is ever due), each event arrives exactly once, with
 * its id as `webhook-id`, and is recorded as one attempt; each clearing record is posted
 * once (one capture posting per authorization, none failed for having been taken twice);
 * each external transfer is signed and sent once (one signing, the recipient holds the amount
 * once). Both workers delivered webhooks: the race was real.
 */
const AUTHORIZATIONS = 300;
const BATCH = 100;
const EXTERNAL_TRANSFERS = 20;
const LAMPORTS_SENT = 10_000_000n;
const DONE_MS_MAX = 60_000;

describe('two worker processes', () => {
  const started = useFleet({ apis: 1, workers: 2, chain: true });

  it('delivers each event once, posts each clearing record once, sends each transfer once', async () => {
    const { engines: opened, receiver: hooks, fleet, robin } = started();
    const { store } = opened;
    const account = await fleetAccount(store);
    await subscribe(store, account.scope, hooks);
    const usdc = await fundedVaultCard(store, account.scope, String(AUTHORIZATIONS));
    const sol = await fundedVaultCard(store, account.scope, '10', 'SOL');

    const authorized = await send(
      Array.from({ length: AUTHORIZATIONS }, () =>
        robin.send(
          account.networkKey,
          'POST',
          '/v1/authorizations',
          authorizationBody(usdc.cardId, networkId()),
        ),
      ),
    );
    const authorizationIds = authorized.map((body) => String(body.id));
    expect(authorized.filter((body) => body.approved !== true)).toEqual([]);
    await send(
      Array.from({ length: AUTHORIZATIONS / BATCH }, (_, batch) =>
        robin.send(account.networkKey, 'POST', '/v1/settlements', {
          records: authorizationIds
            .slice(batch * BATCH, (batch + 1) * BATCH)
            .map((authorizationId) => ({ authorizationId, amount: '0.5' })),
        }),
      ),
    );
    const recipients = Array.from(
      { length: EXTERNAL_TRANSFERS },
      () => Keypair.generate().publicKey,
    );
    await send(
      recipients.map((recipient) =>
        robin.send(account.key, 'POST', '/v1/transfers/external', {
          fromVaultId: sol.vaultId,
          address: recipient.toBase58(),
          amount: '0.01',
        }),
      ),
    );

    await allWorkDone(
      opened,
      fleet,
      account.scope.accountId,
      () => receivedIds(hooks),
      DONE_MS_MAX,
    );
    await expectEachEventOnce(opened, account, hooks);
    await expectEachRecordPostedOnce(opened, account, authorizationIds);
    await expectEachTransferSentOnce(opened, account, recipients);
    expect(await checkInvariants(store.client)).toEqual([]);

    // Both workers took part: each delivered some of the events.
    const delivered = await Promise.all(
      fleet.workers.map(async (worker) =>
        (await scrape(worker.base)).value('spendgate_webhook_deliveries_total', {
          outcome: 'delivered',
        }),
      ),
    );
    expect(
      delivered.every((count) => count !== undefined && count > 0),
      String(delivered),
    ).toBe(true);
  });
});

/** Each event of the account received exactly once, signed, as one successful attempt. */
async function expectEachEventOnce(
  opened: FleetEngines,
  account: FleetAccount,
  hooks: Receiver,
): Promise<void> {
  const { rows: events } = await opened.store.client.query<{ id: string }>(
    'SELECT id FROM outbox_events WHERE account_id = $1',
    [account.scope.accountId],
  );
  const times = new Map<string, number>();
  for (const delivery of hooks.received) times.set(delivery.id, (times.get(delivery.id) ?? 0) + 1);
  expect([...times].filter(([, count]) => count !== 1)).toEqual([]);
  expect(new Set(times.keys())).toEqual(new Set(events.map((event) => event.id)));
  expect(
    hooks.received.filter(
      (delivery) => !delivery.verified || delivery.headers['webhook-id'] !== delivery.id,
    ),
  ).toEqual([]);
  const { rows: attempts } = await opened.store.client.query<{ event_id: string }>(
    `SELECT event_id FROM webhook_deliveries WHERE account_id = $1
     GROUP BY event_id HAVING count(*) <> 1 OR bool_or(NOT succeeded) OR max(attempt) <> 1`,
    [account.scope.accountId],
  );
  expect(attempts).toEqual([]);
}

/** Every clearing record captured, none failed; one capture posting of 0.5 per authorization. */
async function expectEachRecordPostedOnce(
  opened: FleetEngines,
  account: FleetAccount,
  authorizationIds: readonly string[],
): Promise<void> {
  const { client } = opened.store;
  const { rows: settlements } = await client.query<{ captured: number; failed: number }>(
    `SELECT captured_count AS captured, failed_count AS failed FROM settlements
     WHERE account_id = $1`,
    [account.scope.accountId],
  );
  expect(settlements).toEqual(
    Array.from({ length: AUTHORIZATIONS / BATCH }, () => ({ captured: BATCH, failed: 0 })),
  );
  const { rows: postings } = await client.query<{ id: string; postings: number; amount: string }>(
    `SELECT t.id, count(DISTINCT e.posting_id)::int AS postings, t.captured_amount::text AS amount
     FROM transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
     WHERE t.id = ANY($1) GROUP BY t.id, t.captured_amount`,
    [authorizationIds],
  );
  expect(postings).toHaveLength(AUTHORIZATIONS);
  expect(postings.filter((row) => row.postings !== 1 || !/^0\.50*$/.test(row.amount))).toEqual([]);
}

/** Every external transfer completed, signed once, and received once on the chain. */
async function expectEachTransferSentOnce(
  opened: FleetEngines,
  account: FleetAccount,
  recipients: readonly PublicKey[],
): Promise<void> {
  const { chain } = opened;
  if (chain === null) throw new Error('the fleet has no chain');
  const { rows } = await opened.store.client.query<{ status: string; signings: number }>(
    `SELECT t.status, s.signings FROM transfers t JOIN transfer_chain_sends s ON s.transfer_id = t.id
     WHERE t.account_id = $1 AND t.kind = 'external'`,
    [account.scope.accountId],
  );
  expect(rows).toEqual(
    Array.from({ length: EXTERNAL_TRANSFERS }, () => ({ status: 'completed', signings: 1 })),
  );
  const connection = chain.connection();
  const balances = await Promise.all(
    recipients.map((recipient) =>
      recipientBalance(connection, { currency: 'SOL', usdcMint: chain.usdcMint, recipient }),
    ),
  );
  expect(balances.filter((lamports) => lamports !== LAMPORTS_SENT)).toEqual([]);
}

/** Waits for every request; each must have succeeded. Answers the bodies, in order. */
async function send(requests: readonly Promise<Outcome>[]): Promise<Record<string, unknown>[]> {
  const outcomes = await Promise.all(requests);
  const failed = outcomes.filter((outcome) => !outcome.answered || outcome.status >= 300);
  expect(failed.slice(0, 5)).toEqual([]);
  return outcomes.map((outcome) => (outcome.answered ? outcome.body : {}));
}
