import { randomBytes } from 'node:crypto';
import { Keypair, type Connection, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { recipientBalance } from '../../src/solana/transfers.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from '../support/http.js';
import {
  forgetPrefixes,
  serverDatabase,
  sleep,
  startWorkerProcess,
  stopAll,
  type Child,
  waitFor,
} from '../support/processes.js';

/**
 * The crash proof with real processes: the `spendgate serve --role worker` process is
 * SIGKILLed after it sent an external SOL transfer (signed, recorded in transfer_chain_sends,
 * broadcast: the recipient's balance shows it) and before it recorded the result (the transfer
 * is still pending). A new worker process then completes the transfer once: the recipient holds
 * the amount once, the vault is debited once, the transfer was signed once and carries the
 * recorded signature. The chain is a local Solana runtime (solana-bankrun behind loopback
 * JSON-RPC) in the test process, which the worker reaches through SOLANA_TEST_RPC_URL.
 */
const ONE_SOL_LAMPORTS = 1_000_000_000n;
const WAIT_MS = 30_000;
/** Attempts at killing the worker inside the window (it is ~500 ms wide: one idle round). */
const ATTEMPTS = 3;

interface ChainSendRow {
  status: string;
  signature: string | null;
  sent_signature: string | null;
  signings: number | null;
}

describe('the Solana transfer worker process, killed after sending', () => {
  const masterKey = randomBytes(32);
  const prefixes: string[] = [];
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;
  let store: Store | undefined;
  let chain: LocalSolana | undefined;
  let connection: Connection;
  let scope: Scope;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    connection = chain.connection();
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 5 }),
      masterKey,
    });
    const account = await store.findOrCreateAccount(
      `solana-crash-${randomBytes(4).toString('hex')}`,
    );
    scope = { accountId: account.id, mode: 'test' };
  });

  afterAll(async () => {
    await stopAll();
    await store?.close();
    await database?.drop();
    await chain?.close();
    await forgetPrefixes(prefixes);
  });

  const opened = (): { store: Store; chain: LocalSolana; databaseUrl: string } => {
    if (store === undefined || chain === undefined || database === undefined)
      throw new Error('used before beforeAll');
    return { store, chain, databaseUrl: database.url };
  };

  /** `spendgate serve --role worker` on the test database, sending to the local runtime. */
  function workerProcess(redisPrefix: string): Child {
    const { chain: local, databaseUrl } = opened();
    return startWorkerProcess({
      DATABASE_URL: databaseUrl,
      SPENDGATE_MASTER_KEY: masterKey.toString('base64'),
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      SPENDGATE_MODES: 'test',
      SOLANA_TEST_RPC_URL: local.url,
      SOLANA_TREASURY_KEY: bs58.encode(local.treasury.secretKey),
      SOLANA_TEST_USDC_MINT: local.usdcMint.toBase58(),
      LOG_LEVEL: 'warn',
    });
  }

  function prefix(): string {
    const made = testRedisPrefix();
    prefixes.push(made);
    return made;
  }

  /** The transfer's status and signature, and its recorded send (if it was signed). */
  async function chainSend(transferId: string): Promise<ChainSendRow> {
    const { rows } = await opened().store.client.query<ChainSendRow>(
      `SELECT t.status, t.signature, s.signature AS sent_signature, s.signings
       FROM transfers t LEFT JOIN transfer_chain_sends s ON s.transfer_id = t.id
       WHERE t.id = $1`,
      [transferId],
    );
    const row = rows[0];
    if (row === undefined) throw new Error(`no transfer ${transferId}`);
    return row;
  }

  const lamports = (recipient: PublicKey) =>
    recipientBalance(connection, { currency: 'SOL', usdcMint: opened().chain.usdcMint, recipient });

  /** A SOL vault holding 5 with a pending external transfer of 1 SOL to a fresh recipient. */
  async function pendingTransfer(): Promise<{
    vaultId: string;
    transferId: string;
    recipient: PublicKey;
  }> {
    const { store: openedStore } = opened();
    const { vault } = await openedStore.createVault(scope, {
      name: 'crash',
      currency: 'SOL',
      metadata: {},
      initialDeposit: new Decimal('5'),
    });
    const recipient = Keypair.generate().publicKey;
    const transfer = await openedStore.createExternalTransfer(scope, {
      fromVaultId: vault.id,
      address: recipient.toBase58(),
      amount: new Decimal('1'),
      memo: null,
    });
    expect(transfer.status).toBe('pending');
    return { vaultId: vault.id, transferId: transfer.id, recipient };
  }

  /**
   * Starts a worker process and SIGKILLs it as soon as the transfer is signed, recorded and
   * sent (the recipient holds the lamports) while it is still pending. Answers whether the
   * kill fell in that window: still pending once the process is gone.
   */
  async function killAfterSend(transferId: string, recipient: PublicKey): Promise<boolean> {
    const worker = workerProcess(prefix());
    try {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const row = await chainSend(transferId);
        if (row.status !== 'pending') break;
        if (row.sent_signature !== null && (await lamports(recipient)) > 0n) break;
        if (Date.now() > deadline)
          throw new Error(`the worker did not send in time; it said:\n${worker.output()}`);
        await sleep(20);
      }
    } finally {
      const exit = await worker.stop('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');
    }
    return (await chainSend(transferId)).status === 'pending';
  }

  it('completes the transfer once after a restart: received once, debited once, signed once', async () => {
    let killedInWindow = false;
    for (let attempt = 1; attempt <= ATTEMPTS && !killedInWindow; attempt++) {
      const { vaultId, transferId, recipient } = await pendingTransfer();
      killedInWindow = await killAfterSend(transferId, recipient);
      if (!killedInWindow) continue;

      // The kill fell after the send and before the result: sent, recorded, not completed.
      const atKill = await chainSend(transferId);
      expect([atKill.status, atKill.signature, atKill.signings]).toEqual(['pending', null, 1]);
      const recorded = atKill.sent_signature;
      expect(recorded).not.toBeNull();
      expect(await lamports(recipient)).toBe(ONE_SOL_LAMPORTS);
      const held = await opened().store.getVault(scope, vaultId);
      expect([held.ledger.toString(), held.pending.toString()]).toEqual(['5', '1']);

      const second = workerProcess(prefix());
      try {
        await waitFor(
          async () => (await chainSend(transferId)).status !== 'pending',
          WAIT_MS,
          () => `the transfer stayed pending; the new worker said:\n${second.output()}`,
        );
      } finally {
        await second.stop('SIGKILL');
      }

      const done = await chainSend(transferId);
      expect(done).toEqual({
        status: 'completed',
        signature: recorded,
        sent_signature: recorded,
        signings: 1,
      });
      // Received once: exactly the amount, not twice.
      expect(await lamports(recipient)).toBe(ONE_SOL_LAMPORTS);
      // Debited once: the hold became one posted debit.
      const vault = await opened().store.getVault(scope, vaultId);
      expect([vault.ledger.toString(), vault.pending.toString()]).toEqual(['4', '0']);
    }
    expect(killedInWindow).toBe(true);
  }, 120_000);
});
