import { Keypair, type PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { keypairSigner } from '../../src/solana/signer.js';
import { recipientBalance } from '../../src/solana/transfers.js';
import { SolanaTransferWorker, type ChainTarget } from '../../src/workers/solana-transfers.js';
import { useTestService, SILENT_LOG } from '../support/http.js';
import { recordUnsentSolTransfer } from '../support/chain-sends.js';

/**
 * External transfers sent by the Solana worker to a real Solana runtime (solana-bankrun behind
 * the local JSON-RPC endpoint), with the real PostgreSQL: SOL and USDC land with the exact
 * amount and the vault is debited once; a transfer the chain refuses fails and restores the
 * vault; a worker that died after sending, or before, or whose blockhash expired, sends the
 * transfer exactly once.
 */

interface Json {
  id: string;
  status: string;
  signature: string | null;
  failureReason: string | null;
  balance: { available: string; pending: string; ledger: string };
}

describe('the Solana transfer worker', () => {
  const harness = useTestService<Json>();
  let chain: LocalSolana;
  let target: ChainTarget;
  let worker: SolanaTransferWorker;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    target = {
      connection: chain.connection(),
      signer: keypairSigner(chain.treasury),
      usdcMint: chain.usdcMint,
    };
    worker = new SolanaTransferWorker(
      harness.service.store,
      { test: target, live: null },
      SILENT_LOG,
    );
  });

  afterAll(async () => {
    await chain.close();
  });

  async function vault(currency: 'SOL' | 'USDC', initialDeposit: string): Promise<string> {
    return (
      await harness.call('POST', '/v1/vaults', {
        name: currency,
        currency,
        network: 'solana',
        initialDeposit,
      })
    ).body.id;
  }

  async function send(vaultId: string, to: PublicKey, amount: string): Promise<string> {
    const made = await harness.call('POST', '/v1/transfers/external', {
      fromVaultId: vaultId,
      address: to.toBase58(),
      amount,
    });
    expect(made.status).toBe(202);
    return made.body.id;
  }

  /** Rounds until the transfer is no longer pending (bounded). */
  async function settle(transferId: string): Promise<Json> {
    for (let round = 0; round < 10; round++) {
      const transfer = (await harness.call('GET', `/v1/transfers/${transferId}`)).body;
      if (transfer.status !== 'pending') return transfer;
      await worker.sendOnce();
    }
    throw new Error('the transfer stayed pending');
  }

  const balanceOf = async (vaultId: string) =>
    (await harness.call('GET', `/v1/vaults/${vaultId}`)).body.balance;

  it('sends SOL and USDC with the exact amount, debiting the vault once', async () => {
    for (const [currency, deposit, amount, units, ledgerAfter] of [
      ['SOL', '5', '1.5', 1_500_000_000n, '3.50'],
      ['USDC', '100', '12.345678', 12_345_678n, '87.654322'],
    ] as const) {
      const vaultId = await vault(currency, deposit);
      const recipient = Keypair.generate().publicKey;
      const transferId = await send(vaultId, recipient, amount);
      const done = await settle(transferId);
      expect([done.status, (done.signature?.length ?? 0) > 0]).toEqual(['completed', true]);
      expect(
        await recipientBalance(target.connection, {
          currency,
          usdcMint: chain.usdcMint,
          recipient,
        }),
      ).toBe(units);
      expect(await balanceOf(vaultId)).toEqual({
        available: ledgerAfter,
        pending: '0.00',
        ledger: ledgerAfter,
      });
    }
  });

  it('fails a transfer the chain refuses, and restores the vault', async () => {
    // The vault holds more USDC than the treasury has on chain (1,000,000).
    const vaultId = await vault('USDC', '2000000');
    const recipient = Keypair.generate().publicKey;
    const transferId = await send(vaultId, recipient, '1500000');
    const done = await settle(transferId);
    expect([done.status, done.failureReason]).toEqual(['failed', 'chain_failed']);
    expect(await balanceOf(vaultId)).toEqual({
      available: '2000000.00',
      pending: '0.00',
      ledger: '2000000.00',
    });
    expect(
      await recipientBalance(target.connection, {
        currency: 'USDC',
        usdcMint: chain.usdcMint,
        recipient,
      }),
    ).toBe(0n);
  });

  it('fails at once a transfer that can never be built (to the treasury itself)', async () => {
    const vaultId = await vault('USDC', '10');
    const transferId = await send(vaultId, chain.treasury.publicKey, '1');
    const done = await settle(transferId);
    expect([done.status, done.failureReason]).toEqual(['failed', 'invalid_transfer']);
    expect((await balanceOf(vaultId)).available).toBe('10.00');
  });

  it('completes once when the worker died after sending (a new worker finds it landed)', async () => {
    const vaultId = await vault('SOL', '3');
    const recipient = Keypair.generate().publicKey;
    const transferId = await send(vaultId, recipient, '1');
    // This worker signs, records and sends, then "dies": a new one takes over.
    await new SolanaTransferWorker(
      harness.service.store,
      { test: target, live: null },
      SILENT_LOG,
    ).sendOnce();
    expect((await harness.call('GET', `/v1/transfers/${transferId}`)).body.status).toBe('pending');
    const done = await settle(transferId);
    expect(done.status).toBe('completed');
    expect(
      await recipientBalance(target.connection, {
        currency: 'SOL',
        usdcMint: chain.usdcMint,
        recipient,
      }),
    ).toBe(1_000_000_000n);
    expect((await balanceOf(vaultId)).ledger).toBe('2.00');
  });

  it('sends the recorded bytes when the worker died before sending, and re-signs only after expiry', async () => {
    for (const expire of [false, true]) {
      const vaultId = await vault('SOL', '3');
      const recipient = Keypair.generate().publicKey;
      const transferId = await send(vaultId, recipient, '1');
      // A worker recorded its signed transaction and died before sending it.
      const built = await recordUnsentSolTransfer({
        store: harness.service.store,
        target,
        chain,
        transferId,
        recipient,
        expire,
      });
      expect(built.recorded).toBe(true);
      const done = await settle(transferId);
      expect(done.status).toBe('completed');
      // The recorded signature, unless it expired unsent and a new one replaced it.
      expect(done.signature === built.signature).toBe(!expire);
      expect(
        await recipientBalance(target.connection, {
          currency: 'SOL',
          usdcMint: chain.usdcMint,
          recipient,
        }),
      ).toBe(1_000_000_000n);
    }
  });
});
