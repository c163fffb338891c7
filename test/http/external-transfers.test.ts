import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { useTestService } from '../support/http.js';

/**
 * External transfers over HTTP (contract section 12): validated, held at once and recorded as
 * pending for the Solana worker; refused, changing nothing, when the address, the amount, the
 * balance, the policy or (in live mode) the cluster is missing.
 */
interface Json {
  id: string;
  object: string;
  status: string;
  address: string;
  amount: string;
  fromVaultId: string;
  balance: { available: string; pending: string; ledger: string };
  data: { type: string; status: string; amount: string }[];
  error?: { code: string; param?: string };
}

const ADDRESS = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';

describe('external transfers', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const vault = async (initialDeposit: string, key = harness.key) =>
    (
      await call(
        'POST',
        '/v1/vaults',
        { name: 'X', currency: 'USDC', network: 'solana', initialDeposit },
        key,
      )
    ).body;
  const send = (body: object, key?: string) => call('POST', '/v1/transfers/external', body, key);

  it('accepts a transfer with 202, holds its amount, and records it pending', async () => {
    const from = await vault('100');
    const made = await send({
      fromVaultId: from.id,
      address: ADDRESS,
      amount: '25.5',
      memo: 'payout',
    });
    expect(made.status).toBe(202);
    expect(made.body).toMatchObject({
      object: 'transfer',
      status: 'pending',
      address: ADDRESS,
      amount: '25.50',
      fromVaultId: from.id,
    });
    expect((await call('GET', `/v1/vaults/${from.id}`)).body.balance).toEqual({
      available: '74.50',
      pending: '25.50',
      ledger: '100.00',
    });
    const held = await call('GET', `/v1/transactions?vaultId=${from.id}&status=pending`);
    expect(held.body.data.map((t) => [t.type, t.amount])).toEqual([['external_transfer', '25.50']]);
    expect((await call('GET', `/v1/transfers/${made.body.id}`)).body.status).toBe('pending');
  });

  it('refuses a bad address, amount or balance, a blocking policy, and changes nothing', async () => {
    const from = await vault('10');
    await call('PUT', `/v1/vaults/${from.id}/policy`, {
      limits: [{ interval: 'perTransaction', amount: '8' }],
    });
    const cases = [
      [{ address: 'not-an-address' }, 400, 'invalid_address', 'address'],
      [{ address: '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl' }, 400, 'invalid_address', 'address'],
      [{ amount: '1.0000001' }, 400, 'invalid_amount', 'amount'],
      [{ amount: '-1' }, 400, 'invalid_amount', 'amount'],
      [{ amount: '9' }, 402, 'authorization_failed', 'amount'],
      [
        { fromVaultId: 'vlt_0123456789abcdef0123456789abcdef' },
        404,
        'vault_not_found',
        'fromVaultId',
      ],
    ] as const;
    for (const [change, status, code, param] of cases) {
      const answer = await send({ fromVaultId: from.id, address: ADDRESS, amount: '1', ...change });
      expect([change, answer.status, answer.body.error?.code, answer.body.error?.param]).toEqual([
        change,
        status,
        code,
        param,
      ]);
    }
    await call('DELETE', `/v1/vaults/${from.id}/policy`);
    const tooMuch = await send({ fromVaultId: from.id, address: ADDRESS, amount: '10.01' });
    expect([tooMuch.status, tooMuch.body.error?.code]).toEqual([402, 'insufficient_balance']);
    await call('POST', `/v1/vaults/${from.id}/freeze`);
    const frozen = await send({ fromVaultId: from.id, address: ADDRESS, amount: '1' });
    expect([frozen.status, frozen.body.error?.code]).toEqual([409, 'vault_frozen']);
    expect((await call('GET', `/v1/vaults/${from.id}`)).body.balance.pending).toBe('0.00');
    expect((await call('GET', `/v1/transfers?vaultId=${from.id}`)).body.data).toEqual([]);
  });

  it('refuses live transfers and closings to an address with 503 while no Solana cluster is configured', async () => {
    const live = await harness.service.key({ mode: 'live' });
    // A live vault starts empty; the operator's funding goes through the store.
    const from = await vault('0', live.key);
    await harness.service.store.deposit(live.scope, from.id, new Decimal('10'));
    const answer = await send({ fromVaultId: from.id, address: ADDRESS, amount: '1' }, live.key);
    expect([answer.status, answer.body.error?.code]).toEqual([503, 'service_unavailable']);
    // Closing a vault to an address goes on chain too.
    const close = await call(
      'POST',
      `/v1/vaults/${from.id}/close`,
      { destination: { address: ADDRESS } },
      live.key,
    );
    expect([close.status, close.body.error?.code]).toEqual([503, 'service_unavailable']);
    expect((await call('GET', `/v1/vaults/${from.id}`, undefined, live.key)).body.status).toBe(
      'active',
    );
    expect(
      (await call('GET', `/v1/vaults/${from.id}`, undefined, live.key)).body.balance.pending,
    ).toBe('0.00');
  });
});
