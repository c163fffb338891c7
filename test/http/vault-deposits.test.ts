import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { keypairSigner } from '../../src/solana/signer.js';
import { DepositWatcher } from '../../src/workers/deposit-watcher.js';
import { foreignMint, outsideWallet, sendDeposit } from '../support/deposits.js';
import { SILENT_LOG, useTestService } from '../support/http.js';

/**
 * A vault funded the way its users fund a crypto account, seen through the API: the vault's
 * `depositAddress` (Create, Retrieve), a real USDC send on the local chain, the watcher's pass,
 * then the vault's balance and `GET /v1/vaults/{id}/deposits` (the ignored foreign mint too).
 */
interface Json {
  id: string;
  depositAddress: string | null;
  balance: { ledger: string };
  object: string;
  data: {
    status: string;
    ignoredReason: string | null;
    amount: string;
    signature: string;
    sender: string;
    transactionId: string | null;
  }[];
  hasMore: boolean;
  nextCursor: string | null;
  error: { code: string };
}

describe('deposits through the API', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  let chain: LocalSolana;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
  });

  afterAll(async () => {
    await chain.close();
  });

  it('shows the deposit address, and lists the credited and the ignored transfers', async () => {
    const created = await call('POST', '/v1/vaults', {
      name: 'Funded on chain',
      currency: 'USDC',
      network: 'solana',
    });
    expect(created.status).toBe(201);
    const { id, depositAddress } = created.body;
    expect(depositAddress).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect((await call('GET', `/v1/vaults/${id}`)).body.depositAddress).toBe(depositAddress);
    expect((await call('GET', `/v1/vaults/${id}/deposits`)).body).toEqual({
      object: 'list',
      data: [],
      hasMore: false,
      nextCursor: null,
    });

    const wallet = await outsideWallet(chain, { sol: '5', usdc: '100' });
    const to = new PublicKey(depositAddress ?? '');
    const signature = await sendDeposit(chain, wallet, to, '42.5', 'USDC');
    const mint = await foreignMint(chain, wallet, 1_000_000n);
    await sendDeposit(chain, wallet, to, '1', { mint });
    const connection = chain.connection();
    const target = { connection, signer: keypairSigner(chain.treasury), usdcMint: chain.usdcMint };
    await new DepositWatcher(
      harness.service.store,
      { test: target, live: null },
      SILENT_LOG,
    ).scanOnce();

    expect((await call('GET', `/v1/vaults/${id}`)).body.balance.ledger).toBe('42.50');
    const page = await call('GET', `/v1/vaults/${id}/deposits?limit=1`);
    expect(page.status).toBe(200);
    expect(page.body.data).toMatchObject([{ status: 'ignored', ignoredReason: 'other_mint' }]);
    expect(page.body.hasMore).toBe(true);
    const rest = await call(
      'GET',
      `/v1/vaults/${id}/deposits?limit=1&startingAfter=${page.body.nextCursor ?? ''}`,
    );
    expect(rest.body.data).toMatchObject([
      {
        status: 'credited',
        ignoredReason: null,
        amount: '42.5',
        signature,
        sender: wallet.publicKey.toBase58(),
      },
    ]);
    const transactionId = rest.body.data[0]?.transactionId ?? '';
    const deposit = await call('GET', `/v1/transactions/${transactionId}`);
    expect(deposit.body).toMatchObject({
      type: 'deposit',
      status: 'completed',
      amount: '42.50',
      onChain: { signature, sender: wallet.publicKey.toBase58() },
    });
    expect((await call('GET', '/v1/vaults/vlt_nope/deposits')).body.error.code).toBe(
      'vault_not_found',
    );
  });
});
