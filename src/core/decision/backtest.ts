import { assert } from '../assert.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import { isDecimal, ZERO, type Decimal } from '../money/decimal.js';
import type { AggregateSpec, SpendTotals } from '../policy/aggregates.js';
import type { CompiledPolicy } from '../policy/compile.js';
import type { AuthorizationRequest, EvaluationInput } from '../policy/evaluation-input.js';
import { dayNumberOf, isoDate, MS_PER_DAY, utcDayNumber, windowStartDay } from '../time.js';
import type { DeclineCode, DeclineReason, PolicySource, ShadowMatch } from './result.js';

/*
 * Backtest: a draft policy replayed over recorded authorizations (issue 14), pure and
 * synchronous like `decide`. The store reads the rows, in order, and the spend before the
 * window; this module judges each row under the draft with the spend counters as the draft
 * would have left them, and counts what changed. What it can judge, and what it keeps as
 * recorded, is the policy step of contract section 10 alone:
 *
 * - an authorization declined before the policy was reached (`card_declined`: card or vault
 *   not active, another currency) stays as recorded: the draft never sees it;
 * - an authorization answered in stand-in (`standIn`, or an approval released as `stand_in`)
 *   stays as recorded: what the network was told came from the clock, not the policy;
 * - an authorization declined by the other policy stays as recorded (`otherPolicy`): the
 *   card's own policy, in a vault's backtest (a draft of the vault's policy cannot lift it), or
 *   the vault's, in a card's backtest (the vault's policy is decided first);
 * - every other authorization is judged by the draft: one the draft declines is declined by the
 *   draft's rule; one it approves is approved, except one recorded as `insufficient_balance`,
 *   which stays declined so: the balance at that moment is taken as recorded, never rebuilt
 *   (so a decline the draft lifts is assumed covered by the balance, and an approval the draft
 *   adds takes nothing from the balance of the authorizations after it);
 * - spend rows (a vault's external transfers) are never judged and count as recorded.
 *
 * Spend counters: each of the draft's aggregates is a running sum over its calendar window,
 * started from the spend recorded before the window (`prior`, from the store). An approval
 * under the draft adds to it at its time; a release of it (a reversal, an expiry, the part of a
 * capture below the hold) takes its share back at the time it was recorded, as the store's
 * counters do; a row the draft declines adds nothing. A calendar window that moves on starts
 * again at zero: rows come in time order, so every earlier approval lies before the new start.
 * One approximation: a transaction keeps one time for what was released of it (its capture,
 * else its last change), so a hold released in parts (a partial reversal, then a capture or
 * another reversal) is taken back whole at its last part; an authorization decided between
 * the parts sees its earlier part still spent. (The hold journal that dates each part is folded
 * after 31 days, so a 90-day window could not rely on it.)
 */

/** Bounds of one backtest, so that its time and its answer are bounded whatever the history. */
export const BACKTEST_BOUNDS = {
  /** UTC days in a window, its first and last included. */
  windowDaysMax: 90,
  /** Example transactions in an answer (the first that changed, in order). */
  examplesMax: 100,
  /** Rows of the breakdown by rule and decline code; more are counted under `(other)`. */
  ruleRowsMax: 500,
} as const;

/** A backtest's window: whole UTC days, cut at the time the backtest was asked for. */
export interface BacktestWindow {
  /** `YYYY-MM-DD`, both included. */
  readonly startDate: string;
  readonly endDate: string;
  /** The first day's midnight, epoch milliseconds. */
  readonly startMs: number;
  /** The end, excluded: the midnight after `endDate`, or just after the time asked if sooner. */
  readonly endMs: number;
}

/**
 * The window of `startDate` to `endDate` (both included, at most 90 days) as of `nowMs`, or
 * `parameter_invalid` naming the date at fault. A window reaching past `nowMs` ends there: a
 * backtest replays what was recorded when it was asked for, however late it runs.
 */
export function backtestWindow(startDate: string, endDate: string, nowMs: number): BacktestWindow {
  const startDay = dayOf(startDate, 'startDate');
  const endDay = dayOf(endDate, 'endDate');
  if (endDay < startDay)
    throw new SpendgateError('parameter_invalid', 'endDate is before startDate.', 'endDate');
  const days = endDay - startDay + 1;
  if (days > BACKTEST_BOUNDS.windowDaysMax) {
    throw new SpendgateError(
      'parameter_invalid',
      `The window holds ${days} days; a backtest replays at most ${BACKTEST_BOUNDS.windowDaysMax}.`,
      'endDate',
    );
  }
  const startMs = startDay * MS_PER_DAY;
  if (startMs > nowMs)
    throw new SpendgateError('parameter_invalid', 'startDate is in the future.', 'startDate');
  // Up to and including the millisecond asked at: what was decided then is recorded.
  return { startDate, endDate, startMs, endMs: Math.min((endDay + 1) * MS_PER_DAY, nowMs + 1) };
}

function dayOf(date: string, param: string): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(date) ? dayNumberOf(date) : Number.NaN;
  // A date that does not round-trip (2026-02-30) names no day.
  if (!Number.isSafeInteger(day) || isoDate(day) !== date)
    throw new SpendgateError('parameter_invalid', `${param} must be a date, YYYY-MM-DD.`, param);
  return day;
}

/** The rule name the breakdown counts rows under once it holds `ruleRowsMax` rows. */
export const OTHER_RULES = '(other)';

/** What was recorded of a row's decision. */
export interface RecordedDecision {
  readonly approved: boolean;
  readonly declineCode: DeclineCode | null;
  readonly declineReason: DeclineReason | null;
  /** Answered in stand-in (contract section 10), or an approval released as such. */
  readonly standIn: boolean;
}

/** Spend taken back after an approval (reversal, expiry, the part of a capture below the hold). */
export interface ReplayRelease {
  /** When it was recorded, epoch milliseconds; never before its row's time. */
  readonly atMs: number;
  readonly amount: Decimal;
  /** 1 when the whole authorization failed (the counters' count goes back too), else 0. */
  readonly count: 0 | 1;
}

/** A recorded row, as the replay reads it; rows come in decision order. */
export interface ReplayRow {
  readonly id: string;
  /** Decision time, epoch milliseconds. */
  readonly atMs: number;
  /**
   * `authorization`: a card authorization, judged where the draft can judge it. `spend`: an
   * external transfer of the vault, which counts in the vault's spend as recorded. `posting`:
   * a force capture (contract v1.2, section 16), which no policy declines (the network moved
   * the money) and which counts in the spend at its merchant, as the live counters count it.
   */
  readonly kind: 'authorization' | 'spend' | 'posting';
  /** The purchase as the policy reads it (a spend row: its amount; no merchant). */
  readonly request: AuthorizationRequest;
  readonly recorded: RecordedDecision;
  /** What was released of its spend later; null when nothing was. */
  readonly release: ReplayRelease | null;
}

/** The draft's decision on a row it judged. */
export interface DraftDecision {
  readonly approved: boolean;
  readonly declineCode: DeclineCode | null;
  readonly declineReason: DeclineReason | null;
}

export type BacktestChange = 'approved_to_declined' | 'declined_to_approved';

/** A row whose outcome the draft changes: the answer's examples. */
export interface BacktestExample {
  readonly row: ReplayRow;
  readonly change: BacktestChange;
  readonly draft: DraftDecision;
}

/**
 * Counts of one rule and decline code. For `approvedToDeclined` and `unchanged` (declined both
 * as recorded and under the draft), the rule is the draft's that declines; for
 * `declinedToApproved`, the recorded rule whose decline the draft lifts.
 */
export interface RuleCounts {
  readonly rule: string;
  readonly declineCode: DeclineCode;
  approvedToDeclined: number;
  declinedToApproved: number;
  unchanged: number;
}

export interface ShadowCount {
  readonly rule: string;
  readonly message: string;
  count: number;
}

export interface BacktestResult {
  /** Card authorizations read in the window, replayed or not. */
  readonly authorizations: number;
  /** Of those, the ones the draft judged. */
  readonly replayed: number;
  /** Not judged, kept as recorded, by why. */
  readonly notReplayed: {
    readonly cardDeclined: number;
    readonly standIn: number;
    readonly otherPolicy: number;
  };
  readonly unchanged: number;
  readonly approvedToDeclined: number;
  readonly declinedToApproved: number;
  /** By rule and decline code, most rows first. */
  readonly byRule: readonly RuleCounts[];
  /** The draft's shadow rules that held on replayed authorizations, with how often. */
  readonly shadowMatches: readonly ShadowCount[];
  readonly examples: readonly BacktestExample[];
}

/** One aggregate of the draft, as a running sum over its current calendar window. */
interface RunningWindow {
  readonly spec: AggregateSpec;
  readonly mccs: ReadonlySet<string> | null;
  /** First day (day number) of the window the sum covers; -Infinity for all time. */
  startDay: number;
  amount: Decimal;
  count: number;
}

/** A release waiting for its time, with what it takes back from. */
interface PendingRelease {
  readonly atMs: number;
  readonly spendDay: number;
  readonly mcc: string | null;
  readonly amount: Decimal;
  readonly count: 0 | 1;
  /** The approval's billing amount: a whole release (count 1) takes it back (issue 35). */
  readonly billing: AuthorizationRequest['billing'];
}

/**
 * What an approval adds to `spec`'s running amount: its amount in the vault's asset, or for a
 * billing-currency aggregate its billing amount when billed in that currency (nothing else).
 */
function countedAmount(
  spec: AggregateSpec,
  amount: Decimal,
  billing: AuthorizationRequest['billing'],
): Decimal {
  if (spec.currency === null) return amount;
  return billing?.currency === spec.currency ? billing.amount : ZERO;
}

/**
 * The replay of one draft over one window. Feed the rows in order with `replay`, then read
 * `result()`. Its memory is bounded by the window: the releases still to come (at most one per
 * approval), the breakdown (`ruleRowsMax`) and the examples (`examplesMax`).
 */
export class BacktestReplay {
  readonly #policy: CompiledPolicy;
  readonly #windows: readonly RunningWindow[];
  /** The spend the evaluators read, by aggregate key, kept equal to the windows' sums. */
  readonly #totals: Record<string, Decimal | number> = {};
  readonly #releases = new ReleaseHeap();
  readonly #byRule = new Map<string, RuleCounts>();
  readonly #shadow = new Map<ShadowMatch, ShadowCount>();
  /** The draft's declines are its compiled checks' frozen decisions: their rows by identity. */
  readonly #draftRules = new Map<DraftDecision, RuleCounts>();
  readonly #examples: BacktestExample[] = [];
  readonly #countShadow: boolean;
  readonly #endMs: number;
  /** Which policy the draft stands for: a decline of the other stays as recorded. */
  readonly #draftOf: PolicySource | 'vault';
  /** The day the windows were last moved to, and the latest time seen (rows and releases). */
  #day: number;
  #latestMs: number;
  #authorizations = 0;
  #replayed = 0;
  #cardDeclined = 0;
  #standIn = 0;
  #otherPolicy = 0;
  #unchanged = 0;
  #approvedToDeclined = 0;
  #declinedToApproved = 0;

  /**
   * `startMs` and `endMs`: the window (`backtestWindow`; `endMs` excluded). `prior`: for each
   * aggregate of the draft, the spend recorded from its window's start to `startMs`, by key.
   */
  constructor(
    policy: CompiledPolicy,
    window: { readonly startMs: number; readonly endMs: number },
    prior: SpendTotals,
    draftOf: PolicySource | 'vault' = 'vault',
  ) {
    const { startMs, endMs } = window;
    this.#draftOf = draftOf;
    assert(startMs % MS_PER_DAY === 0, 'a window starts at a UTC midnight');
    assert(
      endMs >= startMs && endMs - startMs <= BACKTEST_BOUNDS.windowDaysMax * MS_PER_DAY,
      'a window of at most 90 days',
    );
    this.#policy = policy;
    this.#endMs = endMs;
    this.#day = utcDayNumber(startMs);
    this.#latestMs = startMs;
    this.#countShadow = policy.shadowChecks.length > 0;
    this.#windows = policy.aggregates.map((spec) => {
      const value = prior[spec.key];
      const running: RunningWindow = {
        spec,
        mccs: spec.merchantCategories === null ? null : new Set(spec.merchantCategories),
        startDay: spec.interval === 'allTime' ? -Infinity : windowStartDay(spec.interval, startMs),
        amount: ZERO,
        count: 0,
      };
      if (spec.measure === 'amount') {
        assert(isDecimal(value) && !value.isNegative(), 'prior spend is a core Decimal >= 0');
        running.amount = value;
      } else {
        assert(Number.isSafeInteger(value) && (value as number) >= 0, 'a prior count >= 0');
        running.count = value as number;
      }
      this.#totals[spec.key] = value as Decimal | number;
      return running;
    });
  }

  /** Replays one row: the next in decision order, inside the window. */
  replay(row: ReplayRow): void {
    assert(row.atMs < this.#endMs, 'a row of the window');
    // Rows come in id order; an id made ahead of its clock (ids.ts) may run a little ahead of
    // the next row's time. The windows only move forward: they follow the latest time seen.
    this.#applyReleasesDueBy(row.atMs);
    this.#advanceTo(row.atMs);
    if (row.kind !== 'authorization') {
      if (row.recorded.approved) this.#spend(row);
      return;
    }
    this.#authorizations += 1;
    const recorded = row.recorded;
    if (recorded.standIn) {
      this.#standIn += 1;
      if (recorded.approved) this.#spend(row);
      return;
    }
    if (!recorded.approved && recorded.declineCode === 'card_declined') {
      this.#cardDeclined += 1;
      return;
    }
    if (
      !recorded.approved &&
      recorded.declineCode === 'authorization_failed' &&
      (recorded.declineReason?.policy ?? 'vault') !== this.#draftOf
    ) {
      this.#otherPolicy += 1;
      return;
    }
    this.#judge(row);
  }

  /** What the replay found, over every row replayed so far. */
  result(): BacktestResult {
    const byRule = [...this.#byRule.values()].sort(
      (a, b) =>
        b.approvedToDeclined +
          b.declinedToApproved +
          b.unchanged -
          (a.approvedToDeclined + a.declinedToApproved + a.unchanged) ||
        (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0),
    );
    return {
      authorizations: this.#authorizations,
      replayed: this.#replayed,
      notReplayed: {
        cardDeclined: this.#cardDeclined,
        standIn: this.#standIn,
        otherPolicy: this.#otherPolicy,
      },
      unchanged: this.#unchanged,
      approvedToDeclined: this.#approvedToDeclined,
      declinedToApproved: this.#declinedToApproved,
      byRule: byRule.map((counts) => ({ ...counts })),
      shadowMatches: [...this.#shadow.values()].map((counts) => ({ ...counts })),
      examples: [...this.#examples],
    };
  }

  /** The card authorizations read so far, judged or not: a run's progress. */
  get authorizations(): number {
    return this.#authorizations;
  }

  #judge(row: ReplayRow): void {
    this.#replayed += 1;
    const recorded = row.recorded;
    const input: EvaluationInput = { request: row.request, spend: this.#totals, nowMs: row.atMs };
    if (this.#countShadow) {
      // A compiled check reports the same frozen match every time: counted by identity.
      for (const match of this.#policy.shadowMatches(input)) {
        const counts = this.#shadow.get(match);
        if (counts === undefined) this.#shadow.set(match, { ...match, count: 1 });
        else counts.count += 1;
      }
    }
    const decline = this.#policy.firstDecline(input);
    // The balance is taken as recorded: a decline for it stays one unless the draft declines
    // first (its policy step comes before the balance, contract section 10).
    const draft: DraftDecision =
      decline !== null
        ? decline
        : recorded.declineCode === 'insufficient_balance'
          ? recorded
          : APPROVED_DRAFT;
    if (draft.approved) this.#spend(row);
    if (recorded.approved === draft.approved) {
      this.#unchanged += 1;
      if (!draft.approved) this.#draftRuleCounts(draft, recorded).unchanged += 1;
      return;
    }
    const change: BacktestChange = recorded.approved
      ? 'approved_to_declined'
      : 'declined_to_approved';
    if (recorded.approved) {
      this.#approvedToDeclined += 1;
      this.#draftRuleCounts(draft, recorded).approvedToDeclined += 1;
    } else {
      this.#declinedToApproved += 1;
      this.#ruleCounts(recorded).declinedToApproved += 1;
    }
    if (this.#examples.length < BACKTEST_BOUNDS.examplesMax)
      this.#examples.push({ row, change, draft });
  }

  /**
   * The breakdown's row of a decline of the draft: a compiled check's decision, found by its
   * identity; or the recorded balance decline the draft kept, one object per row (by its key).
   */
  #draftRuleCounts(decision: DraftDecision, recorded: RecordedDecision): RuleCounts {
    if (decision === recorded) return this.#ruleCounts(decision);
    let counts = this.#draftRules.get(decision);
    if (counts === undefined) {
      counts = this.#ruleCounts(decision);
      this.#draftRules.set(decision, counts);
    }
    return counts;
  }

  /** The breakdown's row of a decline's rule and code (past the bound, the `(other)` row). */
  #ruleCounts(decision: DraftDecision): RuleCounts {
    const declineCode = decision.declineCode;
    assert(declineCode !== null, 'a decline has a code');
    let rule = decision.declineReason?.rule ?? OTHER_RULES;
    let counts = this.#byRule.get(`${declineCode}\u0000${rule}`);
    if (counts !== undefined) return counts;
    // Past the bound, one row per decline code (three at most) takes the rest.
    if (this.#byRule.size >= BACKTEST_BOUNDS.ruleRowsMax) {
      rule = OTHER_RULES;
      counts = this.#byRule.get(`${declineCode}\u0000${rule}`);
      if (counts !== undefined) return counts;
    }
    counts = { rule, declineCode, approvedToDeclined: 0, declinedToApproved: 0, unchanged: 0 };
    const key = `${declineCode}\u0000${rule}`;
    this.#byRule.set(key, counts);
    return counts;
  }

  /** An approval under the draft: its spend now, and its release when it comes. */
  #spend(row: ReplayRow): void {
    const mcc = row.kind === 'spend' ? null : row.request.merchant.mcc;
    const amount = row.request.amount;
    for (const running of this.#windows) {
      if (running.mccs !== null && (mcc === null || !running.mccs.has(mcc))) continue;
      if (running.spec.measure === 'amount') {
        running.amount = running.amount.plus(
          countedAmount(
            running.spec,
            amount,
            row.kind === 'spend' ? undefined : row.request.billing,
          ),
        );
        this.#totals[running.spec.key] = running.amount;
      } else {
        running.count += 1;
        this.#totals[running.spec.key] = running.count;
      }
    }
    const release = row.release;
    if (release === null || release.atMs >= this.#endMs) return;
    assert(release.atMs >= row.atMs, 'a release comes after its authorization');
    this.#releases.push({
      atMs: release.atMs,
      spendDay: utcDayNumber(row.atMs),
      mcc,
      amount: release.amount,
      count: release.count,
      billing: row.kind === 'spend' ? undefined : row.request.billing,
    });
  }

  /** Takes back every release recorded at or before `atMs` (first, at the same millisecond). */
  #applyReleasesDueBy(atMs: number): void {
    for (let next = this.#releases.peek(); next !== undefined && next.atMs <= atMs;) {
      this.#releases.pop();
      this.#advanceTo(next.atMs);
      for (const running of this.#windows) {
        if (running.mccs !== null && (next.mcc === null || !running.mccs.has(next.mcc))) continue;
        // Spend of a day the window has moved past is no longer in its sum.
        if (next.spendDay < running.startDay) continue;
        if (running.spec.measure === 'amount') {
          // Billing amounts count while the authorization does: only a whole release ends that.
          const billing = next.count === 1 ? next.billing : undefined;
          running.amount = running.amount.minus(countedAmount(running.spec, next.amount, billing));
          assert(!running.amount.isNegative(), 'a release takes back no more than was spent');
          this.#totals[running.spec.key] = running.amount;
        } else {
          running.count -= next.count;
          assert(running.count >= 0, 'a release takes back no more than was counted');
          this.#totals[running.spec.key] = running.count;
        }
      }
      next = this.#releases.peek();
    }
  }

  /** Moves each window to the one holding `atMs`; one that moves on starts at zero. */
  #advanceTo(atMs: number): void {
    if (atMs <= this.#latestMs) return;
    this.#latestMs = atMs;
    const day = utcDayNumber(atMs);
    if (day === this.#day) return;
    this.#day = day;
    for (const running of this.#windows) {
      const { interval } = running.spec;
      if (interval === 'allTime') continue;
      const startDay = windowStartDay(interval, atMs);
      if (startDay === running.startDay) continue;
      assert(startDay > running.startDay, 'windows move forward');
      running.startDay = startDay;
      running.amount = ZERO;
      running.count = 0;
      this.#totals[running.spec.key] = running.spec.measure === 'amount' ? ZERO : 0;
    }
  }
}

const APPROVED_DRAFT: DraftDecision = Object.freeze({
  approved: true,
  declineCode: null,
  declineReason: null,
});

/** A binary min-heap of releases by time; its size is bounded by the approvals replayed. */
class ReleaseHeap {
  readonly #items: PendingRelease[] = [];

  peek(): PendingRelease | undefined {
    return this.#items[0];
  }

  push(item: PendingRelease): void {
    const items = this.#items;
    items.push(item);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = items[parent] as PendingRelease;
      if (above.atMs <= item.atMs) break;
      items[index] = above;
      index = parent;
    }
    items[index] = item;
  }

  pop(): void {
    const items = this.#items;
    const last = items.pop();
    if (last === undefined || items.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length &&
        (items[right] as PendingRelease).atMs < (items[left] as PendingRelease).atMs
          ? right
          : left;
      if ((items[child] as PendingRelease).atMs >= last.atMs) break;
      items[index] = items[child] as PendingRelease;
      index = child;
    }
    items[index] = last;
  }
}
