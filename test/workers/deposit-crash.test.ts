import { randomBytes } from 'node:crypto';
import { PublicKey, type Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { outsideWallet, sendDeposit } from '../support/deposits.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from '../support/http.js';
import {
  forgetPrefixes,
  serverDatabase,
  startWorkerProcess,
  stopAll,
  waitFor,
  type Child,
} from '../support/processes.js';

/**
 * The crash proof of the deposit watcher with real processes: a `spendgate serve --role
 * worker` process finds a USDC and a SOL deposit on the local chain, and is SIGKILLed between
 * finding a transfer and crediting it (SPENDGATE_TEST_DEPOSIT_PAUSE, test mode only, stops it
 * exactly there and says so). A new worker process then credits each deposit once, and sweeps
 * it into the treasury; the ledger's invariants hold.
 */
const WAIT_MS = 60_000;
const PAUSED = 'deposit found; paused before crediting';

describe('the deposit watcher process, killed between finding and crediting', () => {
  const masterKey = randomBytes(32);
  const prefixes: string[] = [];
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;
  let chain: LocalSolana;
  let scope: Scope;
  let wallet: Keypair;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 5 }),
      masterKey,
    });
    const account = await store.findOrCreateAccount(
      `deposit-crash-${randomBytes(4).toString('hex')}`,
    );
    scope = { accountId: account.id, mode: 'test' };
    wallet = await outsideWallet(chain, { sol: '20', usdc: '100' });
  });

  afterAll(async () => {
    await stopAll();
    await store.close();
    await database.drop();
    await chain.close();
    await forgetPrefixes(prefixes);
  });

  function workerProcess(pause: boolean): Child {
    const prefix = testRedisPrefix();
    prefixes.push(prefix);
    return startWorkerProcess({
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: masterKey.toString('base64'),
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: prefix,
      SPENDGATE_MODES: 'test',
      SOLANA_TEST_RPC_URL: chain.url,
      SOLANA_TREASURY_KEY: bs58.encode(chain.treasury.secretKey),
      SOLANA_TEST_USDC_MINT: chain.usdcMint.toBase58(),
      SPENDGATE_TEST_DEPOSIT_PAUSE: pause ? '1' : '0',
      LOG_LEVEL: 'warn',
    });
  }

  async function statuses(vaultId: string): Promise<string[]> {
    const { rows } = await store.client.query<{ status: string }>(
      'SELECT status FROM chain_deposits WHERE vault_id = $1',
      [vaultId],
    );
    return rows.map((row) => row.status);
  }

  it('credits each deposit once after the kill, and sweeps it', async () => {
    const vault = async (currency: 'USDC' | 'SOL') =>
      (
        await store.createVault(scope, {
          name: 'crash',
          currency,
          metadata: {},
          initialDeposit: new Decimal(0),
        })
      ).vault;
    const usdcVault = await vault('USDC');
    const solVault = await vault('SOL');
    await sendDeposit(chain, wallet, new PublicKey(usdcVault.depositAddress ?? ''), '12', 'USDC');
    await sendDeposit(chain, wallet, new PublicKey(solVault.depositAddress ?? ''), '3', 'SOL');

    const first = workerProcess(true);
    await waitFor(
      () => first.output().includes(PAUSED),
      WAIT_MS,
      () => `the watcher did not find the deposit; it said:\n${first.output()}`,
    );
    const exit = await first.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    // Killed after finding, before crediting: nothing recorded, nothing credited.
    expect([...(await statuses(usdcVault.id)), ...(await statuses(solVault.id))]).toEqual([]);
    expect((await store.getVault(scope, usdcVault.id)).ledger.toFixed()).toBe('0');

    const second = workerProcess(false);
    try {
      await waitFor(
        async () =>
          (await statuses(usdcVault.id)).join() === 'swept' &&
          (await statuses(solVault.id)).join() === 'swept',
        WAIT_MS,
        () => `the deposits were not credited and swept; the new worker said:\n${second.output()}`,
      );
    } finally {
      await second.stop('SIGKILL');
    }
    expect((await store.getVault(scope, usdcVault.id)).ledger.toFixed()).toBe('12');
    expect((await store.getVault(scope, solVault.id)).ledger.toFixed()).toBe('3');
    const { rows } = await store.client.query<{ count: string }>(
      `SELECT count(*)::text AS count FROM transactions WHERE type = 'deposit' AND account_id = $1`,
      [scope.accountId],
    );
    expect(rows[0]?.count).toBe('2');
    expect(await checkInvariants(store.client)).toEqual([]);
  }, 180_000);
});
