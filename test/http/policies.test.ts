import { describe, expect, it } from 'vitest';
import { compilePolicy, decide, Decimal, type DecideInput } from 'spendgate';
import { useTestService } from '../support/http.js';
import { refusalOf } from '../support/refusal.js';

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

  it('reads an amount of -0 as the library does: a JSON -0 is 0, the string "-0" is refused', async () => {
    const created = await vault('30');
    // JSON.stringify writes -0 as 0, so the body is written by hand.
    const simulateRaw = async (amount: string) => {
      const response = await fetch(
        `${harness.service.base}/v1/vaults/${created.id}/policy/simulate`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${harness.key}`, 'content-type': 'application/json' },
          body: `{"policy":${JSON.stringify(policy)},"transaction":{"amount":${amount},"merchant":${JSON.stringify(merchant)}}}`,
        },
      );
      return [
        response.status,
        (await response.json()) as Json & { error?: { message: string } },
      ] as const;
    };
    const [zeroStatus, zero] = await simulateRaw('-0');
    expect([zeroStatus, zero.approved]).toEqual([200, true]);
    const [textStatus, text] = await simulateRaw('"-0"');
    expect([textStatus, text.error]).toEqual([
      400,
      expect.objectContaining({
        code: 'invalid_amount',
        param: 'transaction.amount',
        message: 'amount must not be negative.',
      }) as unknown,
    ]);
    // The library's decide answers the same: test/core/library-inputs.test.ts.
    const compiled = compilePolicy(policy);
    const input = (amount: unknown) =>
      ({
        card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
        vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '30' },
        policy: compiled,
        at: Date.now(),
        request: { cardId: 'card_1', amount, currency: 'USDC', merchant },
      }) as DecideInput;
    expect(decide(input(-0)).approved).toBe(true);
    expect(decide(input(new Decimal('-0'))).approved).toBe(true);
    const refusal = refusalOf(() => decide(input('-0')));
    expect([refusal.code, refusal.message]).toEqual([text.error?.code, text.error?.message]);
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
