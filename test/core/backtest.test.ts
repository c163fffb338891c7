import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPROVED,
  BACKTEST_BOUNDS,
  BacktestReplay,
  backtestWindow,
  compilePolicy,
  Decimal,
  isoDate,
  MS_PER_DAY,
  OTHER_RULES,
  SpendgateError,
  storedAmount,
  utcDayNumber,
  type CompiledPolicy,
  type RecordedDecision,
  type ReplayRow,
} from '../../src/core/index.js';
import { SpendCounters } from '../../src/store/spend-window.js';

/**
 * The backtest replay (src/core/decision/backtest.ts), pure: its window, what it judges and
 * keeps, its bounds, and, against the store's own spend counters (SpendCounters, which
 * authorize sums its windows with), that it decides each row as a live vault under the draft
 * would have: with the recorded policy as the draft it changes nothing, and with another it
 * finds exactly what a second vault under that draft decided.
 */
const DAY = MS_PER_DAY;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 0, 5); // a Monday
const compile = (document: unknown): CompiledPolicy =>
  compilePolicy(document, { currency: 'USDC' });
const APPROVED_RECORD: RecordedDecision = {
  approved: true,
  declineCode: null,
  declineReason: null,
  standIn: false,
};

let ids = 0;
function row(
  atMs: number,
  amount: string,
  recorded: RecordedDecision = APPROVED_RECORD,
  extra: Partial<ReplayRow> = {},
): ReplayRow {
  ids += 1;
  return {
    id: `txn_${String(ids).padStart(32, '0')}`,
    atMs,
    kind: 'authorization',
    request: {
      cardId: 'card_a',
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: { name: 'Cafe', mcc: '5812', country: 'US' },
    },
    recorded,
    release: null,
    ...extra,
  };
}
const declinedBy = (
  code: 'authorization_failed' | 'insufficient_balance' | 'card_declined',
  rule: string,
  standIn = false,
): RecordedDecision => ({
  approved: false,
  declineCode: code,
  declineReason: { rule, message: rule },
  standIn,
});

describe('backtestWindow', () => {
  const now = START + 10 * DAY + 5 * HOUR;
  const refusal = (start: string, end: string) => {
    try {
      backtestWindow(start, end, now);
      return null;
    } catch (error) {
      if (!(error instanceof SpendgateError)) throw error;
      return [error.code, error.param];
    }
  };

  it('is whole UTC days, at most 90, cut just after now', () => {
    expect(backtestWindow(isoDate(utcDayNumber(START)), '2026-01-06', now)).toEqual({
      startDate: '2026-01-05',
      endDate: '2026-01-06',
      startMs: START,
      endMs: START + 2 * DAY,
    });
    expect(backtestWindow('2026-01-05', '2026-02-28', now).endMs).toBe(
      START + 10 * DAY + 5 * HOUR + 1,
    );
    expect(refusal('2026-01-05', isoDate(utcDayNumber(START) + 89))).toBeNull();
  });

  it('refuses a window that is not one, naming the date at fault', () => {
    expect(refusal('2026-01-05', isoDate(utcDayNumber(START) + 90))).toEqual([
      'parameter_invalid',
      'endDate',
    ]);
    expect(refusal('2026-01-06', '2026-01-05')).toEqual(['parameter_invalid', 'endDate']);
    expect(refusal('2026-02-30', '2026-03-01')).toEqual(['parameter_invalid', 'startDate']);
    expect(refusal('2026-1-5', '2026-03-01')).toEqual(['parameter_invalid', 'startDate']);
    expect(refusal('2026-01-05', 'tomorrow')).toEqual(['parameter_invalid', 'endDate']);
    expect(refusal('2026-01-16', '2026-01-20')).toEqual(['parameter_invalid', 'startDate']);
  });
});

describe('storedAmount', () => {
  it('reads a NUMERIC(38, 9) text as decimal.js does, word for word', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 999_999_999_999 })),
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.boolean(),
        (whole, fraction, longWhole) => {
          const text = `${longWhole ? `${whole}${whole}`.slice(0, 29) : whole}.${String(fraction).padStart(9, '0')}`;
          const read = storedAmount(text);
          const reference = new Decimal(text);
          expect([read.d, read.e, read.s, read.toFixed()]).toEqual([
            reference.d,
            reference.e,
            reference.s,
            reference.toFixed(),
          ]);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('BacktestReplay', () => {
  const window = { startMs: START, endMs: START + 30 * DAY };

  it('starts limits from the spend before the window, and a window that moves on from zero', () => {
    const policy = compile({ limits: [{ interval: 'weekly', amount: '100' }] });
    // A window from a Wednesday: 70 was spent on its week's Monday and Tuesday.
    const wednesday = START + 2 * DAY;
    const replay = new BacktestReplay(
      policy,
      { startMs: wednesday, endMs: wednesday + 30 * DAY },
      { 'amount:weekly': new Decimal('70') },
    );
    replay.replay(row(wednesday + HOUR, '40')); // 70 + 40 > 100: declined
    replay.replay(row(wednesday + 2 * HOUR, '30')); // 70 + 30: approved
    replay.replay(row(wednesday + 5 * DAY, '90')); // the next Monday: a new week, from zero
    const result = replay.result();
    expect([result.approvedToDeclined, result.unchanged]).toEqual([1, 2]);
    expect(result.examples.map((example) => example.row.request.amount.toFixed())).toEqual(['40']);
  });

  it('takes a release back at its time, from the window still holding its day', () => {
    const policy = compile({ limits: [{ interval: 'daily', count: 1 }] });
    const replay = new BacktestReplay(policy, window, { 'count:daily': 0 });
    replay.replay(
      row(START + HOUR, '10', APPROVED_RECORD, {
        release: { atMs: START + 3 * HOUR, amount: new Decimal('10'), count: 1 },
      }),
    );
    replay.replay(row(START + 2 * HOUR, '5')); // the first still counts: declined
    replay.replay(row(START + 4 * HOUR, '5')); // released at 3h: approved
    expect(replay.result()).toMatchObject({ approvedToDeclined: 1, unchanged: 2 });
  });

  it("keeps a decline of the other policy as recorded: the card's in a vault's backtest, the vault's in a card's", () => {
    const policy = compile({ limits: [{ interval: 'perTransaction', amount: '50' }] });
    const byCard: RecordedDecision = {
      ...declinedBy('authorization_failed', 'card-rule'),
      declineReason: { rule: 'card-rule', message: 'card-rule', policy: 'card' },
    };
    const byVault = declinedBy('authorization_failed', 'vault-rule');
    for (const [draftOf, kept, judged] of [
      ['vault', byCard, byVault],
      ['card', byVault, byCard],
    ] as const) {
      const replay = new BacktestReplay(policy, window, {}, draftOf);
      replay.replay(row(START + 1, '10', kept));
      replay.replay(row(START + 2, '10', judged));
      expect(replay.result(), draftOf).toMatchObject({
        authorizations: 2,
        replayed: 1,
        notReplayed: { cardDeclined: 0, standIn: 0, otherPolicy: 1 },
        declinedToApproved: 1,
      });
    }
  });

  it('keeps what the draft cannot judge as recorded, and the balance as recorded', () => {
    const policy = compile({ limits: [{ interval: 'perTransaction', amount: '50' }] });
    const replay = new BacktestReplay(policy, window, {});
    replay.replay(row(START + 1, '10', declinedBy('card_declined', 'card_frozen')));
    replay.replay(row(START + 2, '10', declinedBy('card_declined', 'stand_in', true)));
    replay.replay(row(START + 3, '10', declinedBy('insufficient_balance', 'available_balance')));
    replay.replay(row(START + 4, '60', declinedBy('insufficient_balance', 'available_balance')));
    replay.replay(row(START + 5, '10', declinedBy('authorization_failed', 'old-rule')));
    replay.replay(row(START + 6, '10', APPROVED_RECORD, { kind: 'spend' }));
    const result = replay.result();
    expect(result).toMatchObject({
      authorizations: 5,
      replayed: 3,
      notReplayed: { cardDeclined: 1, standIn: 1, otherPolicy: 0 },
      unchanged: 2,
      approvedToDeclined: 0,
      declinedToApproved: 1,
    });
    expect(result.byRule).toEqual([
      {
        rule: 'available_balance',
        declineCode: 'insufficient_balance',
        approvedToDeclined: 0,
        declinedToApproved: 0,
        unchanged: 1,
      },
      {
        rule: 'limits[0]',
        declineCode: 'authorization_failed',
        approvedToDeclined: 0,
        declinedToApproved: 0,
        unchanged: 1,
      },
      {
        rule: 'old-rule',
        declineCode: 'authorization_failed',
        approvedToDeclined: 0,
        declinedToApproved: 1,
        unchanged: 0,
      },
    ]);
  });

  it('bounds its examples and its breakdown', () => {
    const replay = new BacktestReplay(compile({}), window, {});
    const rules = BACKTEST_BOUNDS.ruleRowsMax + 20;
    for (let index = 0; index < rules; index++)
      replay.replay(row(START + index, '1', declinedBy('authorization_failed', `rule-${index}`)));
    const result = replay.result();
    expect(result.declinedToApproved).toBe(rules);
    expect(result.examples.length).toBe(BACKTEST_BOUNDS.examplesMax);
    expect(result.byRule.length).toBe(BACKTEST_BOUNDS.ruleRowsMax + 1);
    expect(result.byRule.find((counts) => counts.rule === OTHER_RULES)?.declinedToApproved).toBe(
      20,
    );
  });
});

/**
 * A live vault in memory: each purchase decided by its policy over the store's own counters
 * (SpendCounters, summed as authorize sums them), approvals and releases written to them as
 * the store writes them. The balance never declines (the replay takes it as recorded).
 */
class LiveVault {
  readonly counters = new SpendCounters();
  constructor(public policy: CompiledPolicy) {}

  decide(atMs: number, amount: Decimal, mcc: string): RecordedDecision {
    const decision =
      this.policy.firstDecline({
        request: { cardId: 'card_a', amount, currency: 'USDC', merchant: merchantAt(mcc) },
        spend: this.counters.totals(this.policy.aggregates, atMs),
        nowMs: atMs,
      }) ?? APPROVED;
    if (decision.approved) this.counters.addApproval(isoDate(utcDayNumber(atMs)), mcc, amount);
    return { ...decision, standIn: false };
  }

  /** A release of an approval of `approvedAtMs`: the rows its approval added to, back down. */
  release(approvedAtMs: number, mcc: string, amount: Decimal, count: 0 | 1): void {
    for (const [rowMcc, day] of [
      ['', isoDate(utcDayNumber(approvedAtMs))],
      ['', '0001-01-01'],
      [mcc, isoDate(utcDayNumber(approvedAtMs))],
      [mcc, '0001-01-01'],
    ] as const)
      this.counters.add(rowMcc, day, amount.negated(), -count);
  }
}

const merchantAt = (mcc: string) => ({ name: 'Cafe', mcc, country: 'US' });
const MCCS = ['5812', '5411', '7995'];
const limit = fc
  .record({
    interval: fc.constantFrom('daily', 'weekly', 'monthly', 'yearly', 'allTime'),
    amount: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
    count: fc.integer({ min: 0, max: 6 }),
    merchantCategories: fc.option(fc.subarray(MCCS, { minLength: 1 }), { nil: undefined }),
  })
  .map(({ interval, amount, count, merchantCategories }) => ({
    interval,
    ...(amount === undefined ? { count } : { amount: String(amount) }),
    ...(merchantCategories === undefined ? {} : { merchantCategories }),
  }));
const policy = fc
  .record({
    limits: fc.array(limit, { minLength: 1, maxLength: 4 }),
    spentOver: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
  })
  .map(({ limits, spentOver }) => ({
    limits,
    ...(spentOver === undefined
      ? {}
      : {
          rules: [
            {
              name: 'weekly-over',
              conditions: {
                all: [{ fact: 'spentWeekly', operator: 'greaterThan', value: spentOver }],
              },
            },
          ],
        }),
  }));
type Event =
  | { kind: 'purchase'; amount: number; mcc: string }
  | { kind: 'release'; pick: number; whole: boolean }
  | { kind: 'wait'; hours: number };
const event: fc.Arbitrary<Event> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      amount: fc.integer({ min: 1, max: 300 }),
      mcc: fc.constantFrom(...MCCS, '4829'),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      pick: fc.nat(),
      whole: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      hours: fc.integer({ min: 1, max: 24 * 40 }),
    }),
    weight: 2,
  },
);

/** An approval of the first vault that may still be released, and whether the second placed it too. */
interface Hold {
  readonly rowIndex: number;
  readonly atMs: number;
  readonly mcc: string;
  readonly amount: Decimal;
  readonly second: boolean;
}

/**
 * Plays `events` on both vaults from `fromMs` (each a second apart at least, waits kept before
 * `untilMs`): each purchase decided by both, each release of the first vault's holds applied
 * to each vault that placed it. Returns what both decided, and the first vault's rows.
 */
function play(
  vaults: readonly [LiveVault, LiveVault],
  events: readonly Event[],
  fromMs: number,
  untilMs: number,
): { outcomes: [boolean, boolean][]; rows: ReplayRow[] } {
  let atMs = fromMs;
  const holds: Hold[] = [];
  const outcomes: [boolean, boolean][] = [];
  const rows: ReplayRow[] = [];
  for (const next of events) {
    atMs += 1_000;
    if (next.kind === 'wait') {
      // Kept before `untilMs`, but never back in time: a release made a second after a
      // purchase must not fall in that purchase's millisecond, where the replay (which cannot
      // tell their order apart) takes the release back first.
      atMs = Math.min(atMs + next.hours * HOUR, Math.max(untilMs, atMs));
    } else if (next.kind === 'purchase') {
      const amount = new Decimal(next.amount);
      const first = vaults[0].decide(atMs, amount, next.mcc);
      const second = vaults[1].decide(atMs, amount, next.mcc);
      outcomes.push([first.approved, second.approved]);
      const recordedRow = row(atMs, String(next.amount), first);
      rows.push({
        ...recordedRow,
        request: { ...recordedRow.request, merchant: merchantAt(next.mcc) },
      });
      if (first.approved)
        holds.push({
          rowIndex: rows.length - 1,
          atMs,
          mcc: next.mcc,
          amount,
          second: second.approved,
        });
    } else {
      const hold = holds.splice(next.pick % Math.max(holds.length, 1), 1)[0];
      if (hold === undefined) continue;
      const part = next.whole ? hold.amount : hold.amount.dividedBy(2);
      const count = next.whole ? 1 : 0;
      vaults[0].release(hold.atMs, hold.mcc, part, count);
      if (hold.second) vaults[1].release(hold.atMs, hold.mcc, part, count);
      const held = rows[hold.rowIndex] as ReplayRow;
      rows[hold.rowIndex] = { ...held, release: { atMs, amount: part, count } };
    }
  }
  return { outcomes, rows };
}

describe('BacktestReplay against live counters', () => {
  it('decides every row as a vault under the draft would have, from the same spend before', () => {
    let changed = 0;
    fc.assert(
      fc.property(
        policy,
        policy,
        fc.array(event, { maxLength: 50 }),
        fc.array(event, { maxLength: 50 }),
        (recordedDocument, draftDocument, before, during) => {
          const recordedPolicy = compile(recordedDocument);
          const draft = compile(draftDocument);
          // The same history before the window, under the recorded policy, on both vaults.
          const vaults = [new LiveVault(recordedPolicy), new LiveVault(recordedPolicy)] as const;
          play(vaults, before, START - 60 * DAY, START - DAY);
          // The draft's spend at the window's start: what its windows hold of the days before.
          const prior = vaults[0].counters.totals(draft.aggregates, START);
          const priorOfRecorded = vaults[0].counters.totals(recordedPolicy.aggregates, START);
          vaults[1].policy = draft;
          const { outcomes, rows } = play(vaults, during, START, START + 85 * DAY);

          const replay = new BacktestReplay(
            draft,
            { startMs: START, endMs: START + 90 * DAY },
            prior,
          );
          for (const replayed of rows) replay.replay(replayed);
          const result = replay.result();
          const expected = { approvedToDeclined: 0, declinedToApproved: 0, unchanged: 0 };
          for (const [first, second] of outcomes) {
            if (first === second) expected.unchanged += 1;
            else if (first) expected.approvedToDeclined += 1;
            else expected.declinedToApproved += 1;
          }
          expect({
            approvedToDeclined: result.approvedToDeclined,
            declinedToApproved: result.declinedToApproved,
            unchanged: result.unchanged,
          }).toEqual(expected);
          // The recorded policy as the draft: nothing changes.
          const same = new BacktestReplay(
            recordedPolicy,
            { startMs: START, endMs: START + 90 * DAY },
            priorOfRecorded,
          );
          for (const replayed of rows) same.replay(replayed);
          expect(same.result()).toMatchObject({
            approvedToDeclined: 0,
            declinedToApproved: 0,
            unchanged: outcomes.length,
          });
          changed += expected.approvedToDeclined + expected.declinedToApproved;
        },
      ),
      { numRuns: 300 },
    );
    expect(changed).toBeGreaterThan(0);
  });
});
