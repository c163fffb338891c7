import type { AmountLike } from '../money/amount.js';
import type { CompiledPolicy } from '../policy/compile.js';
import { AggregateUnread } from '../policy/facts.js';
import type { EvaluationInput, Merchant } from '../policy/evaluation-input.js';
import {
  aliasedName,
  readAmount,
  readInstant,
  readMerchant,
  readObject,
  readPolicy,
  readString,
  refusal,
  withSpendRead,
  type SpendInput,
} from './read-input.js';
import { isReadFacts, readFactsOnce, type ReadFacts } from './read-once.js';
import { APPROVED, withShadowMatches, type Decision } from './result.js';

/**
 * The facts one transaction gives a policy: `evaluate`'s input. The rule engine alone, without
 * cards, vaults or balances: every fact a rule or limit reads (README, "Policies") comes from
 * here, and the currency is the policy's. The names are `decide`'s: `spend` and `at`.
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
  readonly spend?: SpendInput | undefined;
  /**
   * @deprecated Since 0.2: `spend`, the name `decide` uses too. Still read, for one version;
   * giving both is refused.
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

/**
 * Evaluates a compiled policy on one transaction's facts: the policy step of `decide` alone,
 * for users who want the rule engine and not the card, vault and balance checks. Answers
 * approved, or declined (`authorization_failed`) by the first enforcing check that holds, in
 * the policy's order; shadow checks that hold are in `shadowMatches` either way.
 *
 * Amounts are read as `decide` reads them; a fault is a SpendgateError naming the fact
 * (`amount`, `merchant.mcc`, `spend["amount:daily"]`, `at`). Facts from `readFacts` were read
 * there, and are evaluated without reading them again.
 */
export function evaluate(policy: CompiledPolicy, facts: Facts | ReadFacts): Decision {
  const compiled = readPolicy(policy, 'policy');
  if (compiled === null) throw refusal('parameter_missing', 'policy', 'is required');
  let input: EvaluationInput;
  let spendParam: string;
  if (isReadFacts(facts) && facts.currency === compiled.currency.code) {
    input = facts;
    spendParam = facts.spendParam;
  } else {
    if (isReadFacts(facts)) {
      throw refusal(
        'parameter_invalid',
        'facts',
        `were read in ${facts.currency} by readFacts, but the policy is in ${compiled.currency.code}`,
      );
    }
    ({ input, spendParam } = readFactsOf(compiled, facts));
  }
  try {
    return evaluateRead(compiled, input);
  } catch (error) {
    // As in decide: spend not in the core's form is read only when the evaluators find it.
    if (!(error instanceof AggregateUnread)) throw error;
  }
  return evaluateRead(compiled, withSpendRead(input, compiled, spendParam));
}

/**
 * Reads and checks `evaluate`'s facts once, for `policy`'s currency, as `evaluate` does (the
 * same refusals, the same exact amounts): `evaluate(policy, readFacts(policy, facts))` is
 * `evaluate(policy, facts)`, and evaluating read facts again, with this policy or another of
 * its currency, costs the evaluation alone.
 */
export function readFacts(policy: CompiledPolicy, facts: Facts): ReadFacts {
  const compiled = readPolicy(policy, 'policy');
  if (compiled === null) throw refusal('parameter_missing', 'policy', 'is required');
  const { input, spendParam } = readFactsOf(compiled, facts);
  return readFactsOnce(input, spendParam, compiled);
}

function evaluateRead(policy: CompiledPolicy, input: EvaluationInput): Decision {
  const shadowMatches = policy.shadowMatches(input);
  return withShadowMatches(policy.firstDecline(input) ?? APPROVED, shadowMatches);
}

/**
 * The facts as the evaluators read them: a request in the policy's currency, spend, time; and
 * the name spend was given under, for its refusals.
 */
function readFactsOf(
  policy: CompiledPolicy,
  facts: unknown,
): { input: EvaluationInput; spendParam: string } {
  const fields = readObject(facts, 'facts');
  const currency = policy.currency;
  const amount = readAmount(fields['amount'], currency, { param: 'amount' });
  const merchant = readMerchant(fields['merchant'], 'merchant');
  const nowMs = readInstant(fields['at'], 'at');
  const cardId =
    fields['cardId'] === undefined ? undefined : readString(fields['cardId'], 'cardId');
  const spendParam = aliasedName(fields, 'spend', 'spent');
  const spend = fields[spendParam] === undefined ? {} : readObject(fields[spendParam], spendParam);
  return {
    input: {
      // An absent card id reads as undefined, like an absent merchant id: the generated code
      // compares it as such, so the type's string is not needed.
      request: { cardId: cardId as string, amount, currency: currency.code, merchant },
      spend: spend as EvaluationInput['spend'],
      nowMs,
    },
    spendParam,
  };
}
