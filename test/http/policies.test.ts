import { describe, expect, it } from 'vitest';
import { useTestService } from '../support/http.js';

/** Policy routes over real HTTP on PostgreSQL (contract sections 7 and 11). */
interface Json {
  id: string;
  version: number;
  status: string;
  approved: boolean;
  declineCode: string | null;
  declineReason: { rule: string; message: string } | null;
  shadowMatches: { rule: string }[];
  decidedInMicros: number;
  deleted: boolean;
  limits: unknown;
  pending?: string;
  error?: { code: string; param?: string };
}

describe('policy routes', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const vault = async (initialDeposit = '100') =>
    (
      await call('POST', '/v1/vaults', {
        name: 'P',
        currency: 'USDC',
        network: 'solana',
        initialDeposit,
      })
    ).body;
  const policy = {
    limits: [{ interval: 'perTransaction', amount: '50' }],
    rules: [
      {
        name: 'no-casino',
        conditions: { all: [{ fact: 'merchantName', operator: 'contains', value: 'Casino' }] },
      },
      {
        name: 'watch-big',
        mode: 'shadow',
        conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 20 }] },
      },
    ],
  };
  const merchant = { name: 'Cafe', mcc: '5812', country: 'US' };

  it('sets, reads, versions and deletes a policy', async () => {
    const created = await vault();
    const set = await call('PUT', `/v1/vaults/${created.id}/policy`, policy);
    expect([set.status, set.body.version]).toEqual([200, 1]);
    expect(set.body.limits).toEqual(policy.limits);
    expect((await call('PUT', `/v1/vaults/${created.id}/policy`, policy)).body.version).toBe(2);
    expect((await call('GET', `/v1/vaults/${created.id}/policy`)).body.version).toBe(2);
    expect((await call('DELETE', `/v1/vaults/${created.id}/policy`)).body).toEqual({
      object: 'policy',
      vaultId: created.id,
      deleted: true,
    });
    expect((await call('GET', `/v1/vaults/${created.id}/policy`)).body.error?.code).toBe(
      'policy_not_found',
    );
    expect((await call('DELETE', `/v1/vaults/${created.id}/policy`)).status).toBe(404);
  });

  it('refuses an invalid policy with policy_invalid at the fault, and needs policies:write', async () => {
    const created = await vault();
    const refused = await call('PUT', `/v1/vaults/${created.id}/policy`, {
      rules: [{ name: 'x', conditions: { all: [{ fact: 'nope', operator: 'equal', value: 1 }] } }],
    });
    expect([refused.status, refused.body.error]).toEqual([
      400,
      expect.objectContaining({
        code: 'policy_invalid',
        param: 'rules[0].conditions.all[0].fact',
      }) as unknown,
    ]);
    const reader = await harness.service.key({ scopes: ['vaults:read'] });
    expect(
      (await call('PUT', `/v1/vaults/${created.id}/policy`, policy, reader.key)).body.error?.code,
    ).toBe('insufficient_scope');
  });

  it('simulates a draft or the current policy against the live balance, with shadow matches, changing nothing', async () => {
    const created = await vault('30');
    const simulate = (body: unknown) =>
      call('POST', `/v1/vaults/${created.id}/policy/simulate`, body);
    const draft = await simulate({ policy, transaction: { amount: '25', merchant } });
    expect(draft.body).toMatchObject({
      id: null,
      approved: true,
      status: 'pending',
      shadowMatches: [{ rule: 'watch-big' }],
    });
    expect(draft.body.decidedInMicros).toBeGreaterThanOrEqual(0);
    expect(
      (
        await simulate({
          policy,
          transaction: { amount: '25', merchant: { ...merchant, name: 'Casino Royale' } },
        })
      ).body.declineReason?.rule,
    ).toBe('no-casino');
    expect(
      (await simulate({ policy, transaction: { amount: '60', merchant } })).body.declineReason
        ?.rule,
    ).toBe('limits[0]');
    expect((await simulate({ transaction: { amount: '31', merchant } })).body.declineCode).toBe(
      'insufficient_balance',
    );
    expect((await call('GET', `/v1/vaults/${created.id}/policy`)).body.error?.code).toBe(
      'policy_not_found',
    );
    await call('PUT', `/v1/vaults/${created.id}/policy`, policy);
    expect(
      (await simulate({ transaction: { amount: '25', merchant: { ...merchant, name: 'Casino' } } }))
        .body.declineReason?.rule,
    ).toBe('no-casino');
    const refused = await simulate({ transaction: { amount: '1.0000001', merchant } });
    expect(refused.body.error).toMatchObject({
      code: 'invalid_amount',
      param: 'transaction.amount',
    });
    const badMerchant = await simulate({
      transaction: { amount: '1', merchant: { ...merchant, mcc: '58' } },
    });
    expect(badMerchant.body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'transaction.merchant.mcc',
    });
    expect((await call('GET', `/v1/vaults/${created.id}/balance`)).body.pending).toBe('0.00');
  });
});
