import { describe, expect, it } from 'vitest';
import { isoDate, utcDayNumber } from '../../src/core/index.js';
import { fundedCard, MERCHANT, networkId } from '../support/authorize.js';
import { insertAuthorizations } from '../support/history-rows.js';
import { useTestService } from '../support/http.js';

/**
 * Policy backtests over real HTTP on PostgreSQL (issue 14): a draft replayed over a vault's
 * or a card's recorded authorizations, answered at once for a small window, queued (202) for
 * a large one; read back by id; refused as the contract refuses (section 3).
 */
interface Result {
  authorizations: number;
  replayed: number;
  notReplayed: { cardDeclined: number; standIn: number; otherPolicy: number };
  unchanged: number;
  approvedToDeclined: number;
  declinedToApproved: number;
  byRule: {
    rule: string;
    declineCode: string;
    approvedToDeclined: number;
    declinedToApproved: number;
    unchanged: number;
  }[];
  shadowMatches: { rule: string; message: string; count: number }[];
  examples: {
    transactionId: string;
    amount: string;
    change: string;
    recorded: { approved: boolean };
    backtest: { approved: boolean; declineReason: { rule: string } | null };
  }[];
}
interface Json {
  id: string;
  object: string;
  vaultId: string;
  cardId: string | null;
  status: string;
  approved: boolean;
  progress: { replayed: number; total: number | null };
  result: Result | null;
  policy: Record<string, unknown>;
  error?: { code: string; param?: string; message: string };
}

const today = () => isoDate(utcDayNumber(Date.now()));
const daysAgo = (days: number) => isoDate(utcDayNumber(Date.now()) - days);

describe('policy backtests', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string, mcc = MERCHANT.mcc) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: { ...MERCHANT, mcc },
      networkTransactionId: networkId(),
    });
  const window = () => ({ startDate: daysAgo(1), endDate: today() });

  /** A vault under a per-transaction limit of 100, its card's history and a second card's. */
  const history = async () => {
    const { vaultId, cardId } = await fundedCard(harness, '1000');
    await call('PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [{ interval: 'perTransaction', amount: '100' }],
    });
    const other = (await call('POST', '/v1/cards', { vaultId, cardholderName: 'Bo' })).body.id;
    const fifty = await authorize(cardId, '50');
    const over = await authorize(cardId, '150');
    await authorize(cardId, '30', '7995');
    await authorize(other, '20');
    expect([fifty.body.approved, over.body.approved]).toEqual([true, false]);
    return { vaultId, cardId, other, fiftyId: fifty.body.id };
  };

  it("counts a force capture in the draft's limits, as the live counters count it", async () => {
    const { vaultId, cardId } = await fundedCard(harness, '1000');
    const forced = await call('POST', '/v1/captures', {
      cardId,
      amount: '80',
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId: networkId(),
    });
    expect(forced.status).toBe(201);
    const after = await authorize(cardId, '30');
    expect(after.body.approved).toBe(true);
    const daily = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, {
      policy: { limits: [{ interval: 'daily', amount: '100' }] },
      ...window(),
    });
    expect(daily.status).toBe(200);
    // The force capture is no authorization of the draft's to judge, but its 80.00 leaves
    // 20.00 of the day's 100.00: the 30.00 after it would be declined.
    expect(daily.body.result).toMatchObject({
      authorizations: 1,
      replayed: 1,
      approvedToDeclined: 1,
      declinedToApproved: 0,
    });
    expect(daily.body.result?.examples).toMatchObject([
      { transactionId: after.body.id, change: 'approved_to_declined' },
    ]);
  });

  it("replays a vault's authorizations under a draft, answered at once, and reads it back", async () => {
    const { vaultId, fiftyId } = await history();
    const stricter = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, {
      policy: {
        limits: [{ interval: 'perTransaction', amount: '40' }],
        rules: [
          {
            name: 'watch-gambling',
            mode: 'shadow',
            message: 'Gambling',
            conditions: { all: [{ fact: 'mcc', operator: 'equal', value: '7995' }] },
          },
        ],
      },
      ...window(),
    });
    expect(stricter.status).toBe(200);
    expect(stricter.body).toMatchObject({
      object: 'policy_backtest',
      vaultId,
      cardId: null,
      status: 'completed',
      progress: { replayed: 4, total: 4 },
    });
    expect(stricter.body.id).toMatch(/^bt_[0-9a-f]{32}$/);
    expect(stricter.body.result).toMatchObject({
      authorizations: 4,
      replayed: 4,
      notReplayed: { cardDeclined: 0, standIn: 0, otherPolicy: 0 },
      unchanged: 3,
      approvedToDeclined: 1,
      declinedToApproved: 0,
      byRule: [
        {
          rule: 'limits[0]',
          declineCode: 'authorization_failed',
          approvedToDeclined: 1,
          declinedToApproved: 0,
          unchanged: 1,
        },
      ],
      shadowMatches: [{ rule: 'watch-gambling', message: 'Gambling', count: 1 }],
    });
    expect(stricter.body.result?.examples).toMatchObject([
      {
        transactionId: fiftyId,
        amount: '50.00',
        change: 'approved_to_declined',
        recorded: { approved: true },
        backtest: { approved: false, declineReason: { rule: 'limits[0]' } },
      },
    ]);
    // The draft is kept as compiled: a rule's defaults filled in.
    expect(stricter.body.policy).toMatchObject({ rules: [{ action: 'decline', mode: 'shadow' }] });

    const read = await call('GET', `/v1/vaults/${vaultId}/policy/backtests/${stricter.body.id}`);
    expect([read.status, read.body]).toEqual([200, stricter.body]);

    const none = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, {
      policy: {},
      ...window(),
    });
    expect(none.body.result).toMatchObject({
      unchanged: 3,
      approvedToDeclined: 0,
      declinedToApproved: 1,
      byRule: [
        {
          rule: 'limits[0]',
          declineCode: 'authorization_failed',
          approvedToDeclined: 0,
          declinedToApproved: 1,
          unchanged: 0,
        },
      ],
    });
  });

  it("replays one card's authorizations alone, and keeps each backtest under its own subject", async () => {
    const { vaultId, cardId, other } = await history();
    const card = await call('POST', `/v1/cards/${cardId}/policy/backtest`, {
      policy: { limits: [{ interval: 'daily', count: 1 }] },
      ...window(),
    });
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({ vaultId, cardId, status: 'completed' });
    // The card's own three: its first is approved; the count of one turns its later approval
    // (30) down; 150 was declined by the vault's policy, which a card's draft cannot lift (the
    // vault's is decided first): kept as recorded.
    expect(card.body.result).toMatchObject({
      authorizations: 3,
      replayed: 2,
      notReplayed: { cardDeclined: 0, standIn: 0, otherPolicy: 1 },
      approvedToDeclined: 1,
      declinedToApproved: 0,
      unchanged: 1,
    });
    const read = await call('GET', `/v1/cards/${cardId}/policy/backtests/${card.body.id}`);
    expect(read.body).toEqual(card.body);
    for (const path of [
      `/v1/cards/${other}/policy/backtests/${card.body.id}`,
      `/v1/vaults/${vaultId}/policy/backtests/${card.body.id}`,
      `/v1/vaults/${vaultId}/policy/backtests/bt_nope`,
    ]) {
      const missing = await call('GET', path);
      expect([missing.status, missing.body.error?.code, missing.body.error?.param]).toEqual([
        404,
        'policy_not_found',
        'backtestId',
      ]);
    }
  });

  it('refuses a bad window, a bad draft, unknown subjects and keys without transactions:read', async () => {
    const { vaultId, cardId } = await history();
    const refusal = async (path: string, body: unknown, key?: string) => {
      const answer = await call('POST', path, body, key);
      return [answer.status, answer.body.error?.code, answer.body.error?.param];
    };
    const vaultPath = `/v1/vaults/${vaultId}/policy/backtest`;
    expect(
      await refusal(vaultPath, { policy: {}, startDate: daysAgo(90), endDate: today() }),
    ).toEqual([400, 'parameter_invalid', 'endDate']);
    expect(
      await refusal(vaultPath, { policy: {}, startDate: today(), endDate: daysAgo(1) }),
    ).toEqual([400, 'parameter_invalid', 'endDate']);
    expect(
      await refusal(vaultPath, { policy: {}, startDate: '2026-02-30', endDate: today() }),
    ).toEqual([400, 'parameter_invalid', 'startDate']);
    expect(
      await refusal(vaultPath, { policy: {}, startDate: daysAgo(-2), endDate: daysAgo(-3) }),
    ).toEqual([400, 'parameter_invalid', 'startDate']);
    expect(await refusal(vaultPath, { policy: {}, startDate: today() })).toEqual([
      400,
      'parameter_missing',
      'endDate',
    ]);
    expect(
      await refusal(vaultPath, {
        policy: { limits: [{ interval: 'daily', amount: 'ten' }] },
        ...window(),
      }),
    ).toEqual([400, 'policy_invalid', 'policy.limits[0].amount']);
    // The 90 days hold: 89 days before today and today.
    const widest = await call('POST', vaultPath, {
      policy: {},
      startDate: daysAgo(89),
      endDate: today(),
    });
    expect(widest.status).toBe(200);

    expect(
      await refusal('/v1/vaults/vlt_nope/policy/backtest', { policy: {}, ...window() }),
    ).toEqual([404, 'vault_not_found', 'id']);
    expect(
      await refusal('/v1/cards/card_nope/policy/backtest', { policy: {}, ...window() }),
    ).toEqual([404, 'card_not_found', 'id']);
    const stranger = await harness.service.key();
    expect(await refusal(vaultPath, { policy: {}, ...window() }, stranger.key)).toEqual([
      404,
      'vault_not_found',
      'id',
    ]);
    // The scope is checked before anything is looked up: any account's key shows it.
    const reader = await harness.service.key({ scopes: ['vaults:read', 'policies:write'] });
    expect(
      await refusal(`/v1/cards/${cardId}/policy/backtest`, { policy: {}, ...window() }, reader.key),
    ).toEqual([403, 'insufficient_scope', undefined]);
  });

  it('answers a repeated request with the same backtest (Idempotency-Key)', async () => {
    const { vaultId } = await history();
    const send = () =>
      harness.service.request(
        harness.key,
        'POST',
        `/v1/vaults/${vaultId}/policy/backtest`,
        { policy: {}, ...window() },
        { 'Idempotency-Key': `bt-${vaultId}` },
      );
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([200, 200]);
    expect((again.body as Json).id).toBe((first.body as Json).id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('queues a window of more than 10,000 authorizations (202) and answers its run', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '10');
    const { rows } = await harness.service.store.client.query<{
      account_id: string;
      mode: 'test' | 'live';
    }>('SELECT account_id, mode FROM vaults WHERE id = $1', [vaultId]);
    const owner = rows[0];
    if (owner === undefined) throw new Error('the vault exists');
    await insertAuthorizations(
      harness.service.store.client,
      { accountId: owner.account_id, mode: owner.mode, vaultId, cardId },
      10_001,
      Date.now() - 1_000,
    );
    const queued = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, {
      policy: { limits: [{ interval: 'perTransaction', amount: '100' }] },
      startDate: daysAgo(1),
      endDate: today(),
    });
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      status: 'queued',
      progress: { replayed: 0, total: null },
      result: null,
    });
    // The worker role's run (workers/backtests.ts runs it as a BullMQ job).
    expect(await harness.service.store.runBacktest(queued.body.id, { leaseMs: 60_000 })).toBe(
      'completed',
    );
    const done = await call('GET', `/v1/vaults/${vaultId}/policy/backtests/${queued.body.id}`);
    expect(done.body).toMatchObject({
      status: 'completed',
      progress: { replayed: 10_001, total: 10_001 },
    });
    // Amounts cycle 1 to 200, every fourth declined by limits[0]: the draft's limit of 100
    // turns down the approvals over 100 and lifts the declines up to 100.
    let approvedToDeclined = 0;
    let declinedToApproved = 0;
    for (let i = 0; i < 10_001; i++) {
      const amount = 1 + (i % 200);
      const approved = i % 4 !== 0;
      if (approved && amount > 100) approvedToDeclined += 1;
      if (!approved && amount <= 100) declinedToApproved += 1;
    }
    expect(done.body.result).toMatchObject({
      authorizations: 10_001,
      approvedToDeclined,
      declinedToApproved,
      unchanged: 10_001 - approvedToDeclined - declinedToApproved,
    });
    expect(done.body.result?.examples.length).toBe(100);

    // At most five queued or running at once for the account: the sixth is refused, changes
    // nothing, and is accepted again once one has run.
    const draft = {
      policy: { limits: [{ interval: 'perTransaction', amount: '50' }] },
      startDate: daysAgo(1),
      endDate: today(),
    };
    const waiting: string[] = [];
    for (let index = 0; index < 5; index++) {
      const more = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, draft);
      expect(more.status).toBe(202);
      waiting.push(more.body.id);
    }
    const countBacktests = async () =>
      (
        await harness.service.store.client.query<{ count: string }>(
          'SELECT count(*) AS count FROM backtests WHERE vault_id = $1',
          [vaultId],
        )
      ).rows[0]?.count;
    const before = await countBacktests();
    const refused = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, draft);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect(await countBacktests()).toBe(before);
    expect(await harness.service.store.runBacktest(waiting[0] ?? '', { leaseMs: 60_000 })).toBe(
      'completed',
    );
    const accepted = await call('POST', `/v1/vaults/${vaultId}/policy/backtest`, draft);
    expect(accepted.status).toBe(202);
  });
});
