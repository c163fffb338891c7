import { givenWords } from '../errors/given.js';
import type { AmountLike } from '../money/amount.js';
import type { CompiledPolicy } from '../policy/compile.js';
import { AggregateUnread } from '../policy/facts.js';
import type { EvaluationInput, Merchant } from '../policy/evaluation-input.js';
import {
  readAmount,
  readMerchant,
  readObject,
  readPolicy,
  readString,
  refusal,
  withSpendRead,
  type SpendInput,
} from './read-input.js';
import { APPROVED, withShadowMatches, type Decision } from './result.js';

/**
 * The facts one transaction gives a policy: `evaluate`'s input. The rule engine alone, without
 * cards, vaults or balances: every fact a rule or limit reads (README, "Policies") comes from
 * here, and the currency is the policy's.
 */
export interface Facts {
  /** The transaction's amount in the policy's currency, in any form the library takes. */
  readonly amount: AmountLike;
  /** name, mcc and country; city and id when the network sends them. */
  readonly merchant: Merchant;
  /**
   * Spend before this transaction, by aggregate key: exactly the keys `policy.aggregates`
   * lists (`amount:daily`, `count:daily`, `amount:monthly:5812+5814`, ...), amounts in any form,
   * counts as integers. May be left out when the policy lists none.
   */
  readonly spent?: SpendInput | undefined;
  /**
   * When the transaction happens, for `hourUtc`, `dayOfWeekUtc` and windows: a Date, epoch
   * milliseconds, or an ISO 8601 timestamp with its zone ("2026-11-18T10:00:00Z").
   */
  readonly at: Date | number | string;
  /** The card, for rules on the `cardId` fact; absent, it equals nothing and is in no list. */
  readonly cardId?: string | undefined;
}

// A timestamp with a date, a time and a zone; Date.parse reads the rest of ISO 8601 loosely.
const ISO_TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const ISO_TIMESTAMP_LENGTH_MAX = 40;

/**
 * Evaluates a compiled policy on one transaction's facts: the policy step of `decide` alone,
 * for users who want the rule engine and not the card, vault and balance checks. Answers
 * approved, or declined (`authorization_failed`) by the first enforcing check that holds, in
 * the policy's order; shadow checks that hold are in `shadowMatches` either way.
 *
 * Amounts are read as `decide` reads them; a fault is a SpendgateError naming the fact
 * (`amount`, `merchant.mcc`, `spent["amount:daily"]`, `at`).
 */
export function evaluate(policy: CompiledPolicy, facts: Facts): Decision {
  const compiled = readPolicy(policy, 'policy');
  if (compiled === null) throw refusal('parameter_missing', 'policy', 'is required');
  const input = readFacts(compiled, facts);
  try {
    return evaluateRead(compiled, input);
  } catch (error) {
    // As in decide: spend not in the core's form is read only when the evaluators find it.
    if (!(error instanceof AggregateUnread)) throw error;
  }
  return evaluateRead(compiled, withSpendRead(input, compiled, 'spent'));
}

function evaluateRead(policy: CompiledPolicy, input: EvaluationInput): Decision {
  const shadowMatches = policy.shadowMatches(input);
  return withShadowMatches(policy.firstDecline(input) ?? APPROVED, shadowMatches);
}

/** The facts as the evaluators read them: a request in the policy's currency, spend, time. */
function readFacts(policy: CompiledPolicy, facts: unknown): EvaluationInput {
  const fields = readObject(facts, 'facts');
  const currency = policy.currency;
  const amount = readAmount(fields['amount'], currency, { param: 'amount' });
  const merchant = readMerchant(fields['merchant'], 'merchant');
  const nowMs = readInstant(fields['at'], 'at');
  const cardId =
    fields['cardId'] === undefined ? undefined : readString(fields['cardId'], 'cardId');
  const spent = fields['spent'] === undefined ? {} : readObject(fields['spent'], 'spent');
  return {
    // An absent card id reads as undefined, like an absent merchant id: the generated code
    // compares it as such, so the type's string is not needed.
    request: { cardId: cardId as string, amount, currency: currency.code, merchant },
    spend: spent as EvaluationInput['spend'],
    nowMs,
  };
}

/** A Date, epoch milliseconds or an ISO 8601 timestamp with zone, as epoch milliseconds. */
function readInstant(value: unknown, param: string): number {
  if (value === undefined) throw refusal('parameter_missing', param, 'is required');
  let epochMs = Number.NaN;
  if (value instanceof Date) epochMs = value.getTime();
  else if (typeof value === 'number') epochMs = value;
  else if (
    typeof value === 'string' &&
    value.length <= ISO_TIMESTAMP_LENGTH_MAX &&
    ISO_TIMESTAMP.test(value)
  ) {
    epochMs = Date.parse(value);
  }
  if (!Number.isFinite(epochMs)) {
    throw refusal(
      'parameter_invalid',
      param,
      `must be a Date, epoch milliseconds or an ISO 8601 timestamp such as "2026-11-18T10:00:00Z", not ${value instanceof Date ? 'an invalid Date' : givenWords(value)}`,
    );
  }
  return epochMs;
}
