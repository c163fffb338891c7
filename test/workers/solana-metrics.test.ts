import { Connection, Keypair, type PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { keypairSigner } from '../../src/solana/signer.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../src/workers/metrics.js';
import { SolanaTransferWorker, type ChainTarget } from '../../src/workers/solana-transfers.js';
import { SILENT_LOG, useTestService } from '../support/http.js';
import { recordUnsentSolTransfer } from '../support/chain-sends.js';
import { scrape, startWorkerMetricsServer, type Scrape } from '../support/metrics.js';

/**
 * The Solana transfer worker's metrics, moved by transfers to the real local Solana runtime
 * (solana-bankrun behind its JSON-RPC endpoint) and read from /metrics of a worker-role
 * server: each step's outcome by mode, and the confirmation time of the transfers this
 * process sent first.
 */
interface Json {
  id: string;
  status: string;
  failureReason: string | null;
}

const SENDS = 'spendgate_solana_sends_total';
const CONFIRMATION = 'spendgate_solana_confirmation_seconds';

describe('the Solana transfer worker’s metrics', () => {
  const harness = useTestService<Json>();
  let chain: LocalSolana;
  let target: ChainTarget;
  let metrics: WorkerMetrics;
  let worker: SolanaTransferWorker;
  let base = '';
  let close = (): Promise<void> => Promise.resolve();

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    target = {
      connection: chain.connection(),
      signer: keypairSigner(chain.treasury),
      usdcMint: chain.usdcMint,
    };
    metrics = createWorkerMetrics();
    worker = new SolanaTransferWorker(
      harness.service.store,
      { test: target, live: null },
      SILENT_LOG,
      undefined,
      metrics,
    );
    const server = await startWorkerMetricsServer(harness.service.store, metrics.registry);
    base = server.base;
    close = () => server.app.close();
  });

  afterAll(async () => {
    await close();
    await chain.close();
  });

  async function transfer(
    currency: 'SOL' | 'USDC',
    deposit: string,
    to: PublicKey,
    amount: string,
  ) {
    const vault = await harness.call('POST', '/v1/vaults', {
      name: currency,
      currency,
      network: 'solana',
      initialDeposit: deposit,
    });
    const made = await harness.call('POST', '/v1/transfers/external', {
      fromVaultId: vault.body.id,
      address: to.toBase58(),
      amount,
    });
    expect(made.status).toBe(202);
    return made.body.id;
  }

  async function settle(transferId: string, by = worker): Promise<Json> {
    for (let round = 0; round < 10; round++) {
      const read = (await harness.call('GET', `/v1/transfers/${transferId}`)).body;
      if (read.status !== 'pending') return read;
      await by.sendOnce();
    }
    throw new Error('the transfer stayed pending');
  }

  /** What moved in test mode between two scrapes: outcomes, and confirmations timed. */
  function moved(before: Scrape, after: Scrape) {
    const outcomes: Record<string, number> = {};
    for (const { labels, value } of after.samples(SENDS)) {
      if (labels.mode !== 'test' || labels.outcome === undefined) continue;
      const delta = value - (before.value(SENDS, labels) ?? 0);
      if (delta !== 0) outcomes[labels.outcome] = delta;
    }
    const timed = (scraped: Scrape) =>
      scraped.value(`${CONFIRMATION}_count`, { mode: 'test' }) ?? 0;
    return { outcomes, timed: timed(after) - timed(before) };
  }

  async function during(work: () => Promise<void>) {
    const before = await scrape(base);
    await work();
    return moved(before, await scrape(base));
  }

  it('counts a step that met no chain as an error, then the send and its confirmation, timed', async () => {
    const transferId = await transfer('SOL', '3', Keypair.generate().publicKey, '1');
    // A worker whose chain does not answer (nothing listens on port 1): the step fails.
    const unreachable = new SolanaTransferWorker(
      harness.service.store,
      { test: { ...target, connection: new Connection('http://127.0.0.1:1') }, live: null },
      SILENT_LOG,
      undefined,
      metrics,
    );
    expect(await during(() => unreachable.sendOnce().then(() => undefined))).toEqual({
      outcomes: { error: 1 },
      timed: 0,
    });
    let done: Json | undefined;
    expect(
      await during(async () => {
        done = await settle(transferId);
      }),
    ).toEqual({ outcomes: { sent: 1, confirmed: 1 }, timed: 1 });
    expect(done?.status).toBe('completed');
  });

  it('counts an on-chain failure and a transfer refused before sending', async () => {
    // More USDC than the treasury holds on chain (1,000,000): sent, then failed on chain.
    const failing = await transfer('USDC', '2000000', Keypair.generate().publicKey, '1500000');
    expect(
      await during(async () => {
        expect((await settle(failing)).failureReason).toBe('chain_failed');
      }),
    ).toEqual({ outcomes: { sent: 1, failed: 1 }, timed: 0 });
    // To the treasury itself: never sendable.
    const refused = await transfer('USDC', '10', chain.treasury.publicKey, '1');
    expect(
      await during(async () => {
        expect((await settle(refused)).failureReason).toBe('invalid_transfer');
      }),
    ).toEqual({ outcomes: { refused: 1 }, timed: 0 });
  });

  it('counts the same bytes sent again, and a re-signing after expiry; neither is timed here', async () => {
    for (const expire of [false, true]) {
      const recipient = Keypair.generate().publicKey;
      const transferId = await transfer('SOL', '3', recipient, '1');
      // Another process recorded its signed transaction and died before sending it.
      await recordUnsentSolTransfer({
        store: harness.service.store,
        target,
        chain,
        transferId,
        recipient,
        expire,
      });
      expect(
        await during(async () => {
          expect((await settle(transferId)).status).toBe('completed');
        }),
      ).toEqual({
        outcomes: expire ? { resigned: 1, confirmed: 1 } : { resent: 1, confirmed: 1 },
        // Its first send was another process's: its start is unknown here.
        timed: 0,
      });
    }
  });
});
