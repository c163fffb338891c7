import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';

/** Transfers, transactions, metadata and simulated deposits over real HTTP on PostgreSQL. */
interface Json {
  id: string;
  status: string;
  type: string;
  amount: string;
  balance: { ledger: string };
  data: { id: string; type: string; amount: string; vaultId: string }[];
  hasMore: boolean;
  metadata: Record<string, string>;
  hasMetadata: boolean;
  error?: { code: string; param?: string };
}

describe('transfer and transaction routes', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const vault = async (initialDeposit = '100', currency = 'USDC', as = harness.key) =>
    (
      await call(
        'POST',
        '/v1/vaults',
        { name: 'T', currency, network: 'solana', initialDeposit },
        as,
      )
    ).body;

  it('transfers between vaults, lists and retrieves the transfer and both transactions', async () => {
    const [from, to] = [await vault('100'), await vault('0')];
    const made = await call('POST', '/v1/transfers', {
      fromVaultId: from.id,
      toVaultId: to.id,
      amount: '40.5',
      description: 'rent',
      metadata: { invoice: 'INV-1' },
    });
    expect([made.status, made.body.status, made.body.amount]).toEqual([201, 'completed', '40.50']);
    expect((await call('GET', `/v1/transfers/${made.body.id}`)).body.id).toBe(made.body.id);
    expect(
      (await call('GET', `/v1/transfers?vaultId=${from.id}`)).body.data.map((t) => t.id),
    ).toEqual([made.body.id]);
    const outgoing = await call('GET', `/v1/transactions?vaultId=${from.id}&status=completed`);
    expect(outgoing.body.data.map((t) => [t.type, t.amount])).toEqual([
      ['transfer_out', '40.50'],
      ['deposit', '100.00'],
    ]);
    const debit = outgoing.body.data[0];
    expect((await call('GET', `/v1/transactions/${debit?.id ?? ''}`)).body.hasMetadata).toBe(true);
    const metadata = await call('GET', `/v1/transactions/${debit?.id ?? ''}/metadata`);
    expect(metadata.body.metadata).toEqual({ invoice: 'INV-1' });
    expect(metadata.headers.get('cache-control')).toBe('no-store');
  });

  it('filters transactions by amount and date, exactly', async () => {
    const own = await harness.service.key();
    const created = await vault('10', 'USDC', own.key);
    await call(
      'POST',
      '/v1/simulate/deposits',
      { vaultId: created.id, amount: '10.000001' },
      own.key,
    );
    const at = (query: string) =>
      call('GET', `/v1/transactions?vaultId=${created.id}&${query}`, undefined, own.key);
    expect((await at('minAmount=10.000001')).body.data.map((t) => t.amount)).toEqual(['10.000001']);
    expect((await at('maxAmount=10')).body.data.map((t) => t.amount)).toEqual(['10.00']);
    expect((await at('startDate=2000-01-01')).body.data).toHaveLength(2);
    expect((await at('endDate=2000-01-01')).body.data).toHaveLength(0);
    expect((await at('minAmount=ten')).body.error).toMatchObject({
      code: 'invalid_amount',
      param: 'minAmount',
    });
    expect((await at('startDate=yesterday')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'startDate',
    });
  });

  it('refuses what contract section 12 refuses, at the field at fault', async () => {
    const [from, to, sol] = [await vault('10'), await vault('0'), await vault('1', 'SOL')];
    const transfer = (body: Record<string, unknown>) =>
      call('POST', '/v1/transfers', {
        fromVaultId: from.id,
        toVaultId: to.id,
        amount: '1',
        ...body,
      });
    expect((await transfer({ amount: '10.000001' })).body.error).toMatchObject({
      code: 'insufficient_balance',
    });
    expect((await transfer({ amount: '10.000001' })).status).toBe(402);
    expect((await transfer({ toVaultId: sol.id })).body.error?.code).toBe('currency_mismatch');
    expect((await transfer({ amount: 0 })).body.error).toMatchObject({
      code: 'invalid_amount',
      param: 'amount',
    });
    expect(
      (await transfer({ fromVaultId: 'vlt_00000000000000000000000000000000' })).body.error,
    ).toMatchObject({ code: 'vault_not_found', param: 'fromVaultId' });
    const reader = await harness.service.key({ scopes: ['transactions:read'] });
    expect(
      (
        await call(
          'POST',
          '/v1/transfers',
          { fromVaultId: from.id, toVaultId: to.id, amount: '1' },
          reader.key,
        )
      ).body.error?.code,
    ).toBe('insufficient_scope');
  });

  it("reads metadata only for the owner and the counterparty, and hides others' transactions", async () => {
    const other = await harness.service.key();
    const [from, theirs] = [await vault('20'), await vault('0', 'USDC', other.key)];
    await call('POST', '/v1/transfers', {
      fromVaultId: from.id,
      toVaultId: theirs.id,
      amount: '5',
      metadata: { ref: 'x' },
    });
    const credit = (
      await call(
        'GET',
        `/v1/transactions?vaultId=${theirs.id}&status=completed`,
        undefined,
        other.key,
      )
    ).body.data[0];
    expect(
      (await call('GET', `/v1/transactions/${credit?.id ?? ''}/metadata`, undefined, other.key))
        .body.metadata,
    ).toEqual({ ref: 'x' });
    const stranger = await harness.service.key();
    expect(
      (await call('GET', `/v1/transactions/${credit?.id ?? ''}`, undefined, stranger.key)).body
        .error?.code,
    ).toBe('transaction_not_found');
    expect(
      (await call('GET', `/v1/transactions/${credit?.id ?? ''}/metadata`, undefined, stranger.key))
        .status,
    ).toBe(404);
    const noScope = await harness.service.key({ scopes: ['transactions:read'] });
    expect(
      (await call('GET', `/v1/transactions/${credit?.id ?? ''}/metadata`, undefined, noScope.key))
        .body.error?.code,
    ).toBe('insufficient_scope');
  });

  it('simulates deposits in test mode only', async () => {
    const created = await vault('0');
    const deposit = await call('POST', '/v1/simulate/deposits', {
      vaultId: created.id,
      amount: '7.25',
    });
    expect([deposit.status, deposit.body.type, deposit.body.amount]).toEqual([
      201,
      'deposit',
      '7.25',
    ]);
    expect((await call('GET', `/v1/vaults/${created.id}`)).body.balance.ledger).toBe('7.25');
    const live = await harness.service.key({ mode: 'live' });
    const liveVault = await vault('0', 'USDC', live.key);
    expect(
      (
        await call(
          'POST',
          '/v1/simulate/deposits',
          { vaultId: liveVault.id, amount: '1' },
          live.key,
        )
      ).body.error?.code,
    ).toBe('parameter_invalid');
  });
});
