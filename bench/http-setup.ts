import { Decimal, type Scope } from '../src/core/index.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore } from '../src/store/store.js';
import type { Target } from './http-load.js';
import { HTTP_BENCH_DEPOSIT, HTTP_BENCH_POLICY, HTTP_BENCH_PURCHASE } from './workloads.js';

/**
 * What the authorize benches (bench:http, bench:fleet) set up and send: an account with the
 * card network's key, funded vaults each with HTTP_BENCH_POLICY and a card, and authorization
 * bodies each with a networkTransactionId of its own.
 */

const SETUP_PARALLEL = 16;
/** More vaults than any bench needs: a bound on the setup's loop. */
export const BENCH_VAULTS_MAX = 10_000;

/** The account, its card network key, and `vaults` vaults with policy and card, through the store. */
export async function setUpVaults(
  databaseUrl: string,
  masterKey: Buffer,
  vaults: number,
): Promise<{ key: string; cards: readonly string[] }> {
  if (!Number.isInteger(vaults) || vaults < 1 || vaults > BENCH_VAULTS_MAX) {
    throw new Error(`a bench sets up 1 to ${BENCH_VAULTS_MAX} vaults, not ${vaults}`);
  }
  const client = createPgClient({ connectionString: databaseUrl, connectionsMax: SETUP_PARALLEL });
  const store = await openStore({ client, masterKey });
  try {
    const account = await store.findOrCreateAccount('bench-http');
    const scope: Scope = { accountId: account.id, mode: 'test' };
    // The card network's key: its only scope is authorizations:write (its rate-limit class).
    const { key } = await store.createApiKey({
      accountId: account.id,
      mode: 'test',
      scopes: ['authorizations:write'],
    });
    const cards: string[] = [];
    for (let first = 0; first < vaults; first += SETUP_PARALLEL) {
      const group = Array.from(
        { length: Math.min(SETUP_PARALLEL, vaults - first) },
        async (_, offset) => {
          const { vault } = await store.createVault(scope, {
            name: `bench ${first + offset}`,
            currency: 'USDC',
            metadata: {},
            initialDeposit: new Decimal(HTTP_BENCH_DEPOSIT),
          });
          await store.setPolicy(scope, vault.id, HTTP_BENCH_POLICY);
          const card = await store.createCard(scope, {
            vaultId: vault.id,
            cardholderName: 'Bench',
            metadata: {},
          });
          return card.id;
        },
      );
      cards.push(...(await Promise.all(group)));
    }
    if (cards.length !== vaults) throw new Error(`${cards.length} cards set up of ${vaults}`);
    return { key, cards };
  } finally {
    await store.close();
  }
}

/**
 * Targets sending HTTP_BENCH_PURCHASE with the card `card()` picks, under `key`; every body's
 * networkTransactionId is `bench_<runId>_<n>`, n counted across all the targets made here.
 */
export function authorizationTargets(
  runId: string,
  key: string,
): (url: string | readonly string[], path: string, card: () => string) => Target {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let sequence = 0;
  return (url, path, card) => ({
    url,
    path,
    headers,
    nextBody: () => {
      sequence += 1;
      const id = `bench_${runId}_${sequence}`;
      const body = JSON.stringify({
        cardId: card(),
        amount: HTTP_BENCH_PURCHASE.amount,
        currency: HTTP_BENCH_PURCHASE.currency,
        merchant: HTTP_BENCH_PURCHASE.merchant,
        networkTransactionId: id,
      });
      return { id, body };
    },
  });
}
