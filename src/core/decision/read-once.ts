import type { Decimal } from '../money/decimal.js';
import { NO_SPEND, type SpendTotals } from '../policy/aggregates.js';
import type { CompiledPolicy } from '../policy/compile.js';
import type {
  AuthorizationRequest,
  EvaluationInput,
  Merchant,
} from '../policy/evaluation-input.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import type { CardState, DecisionInput, VaultState } from './decide.js';
import { readDecisionInput, readSpend, type DecideInput } from './read-input.js';

/*
 * Read once, decide many times (issue 38). Reading a library input exactly (read-input.ts)
 * costs about as much as deciding it on a policy of plain rules, so a caller that reads at its
 * edge hands `decide` a `ReadInput` and pays for no second reading.
 *
 * A `ReadInput` is an instance of a class this module does not export, recognised by a private
 * field: a plain object cannot pass for one, and a spread copy of one (`{ ...read, at }`) is a
 * plain object again, read in full. `readInput` freezes it and the copies of the objects it
 * holds, so what was read cannot change under it.
 */

/** A `decide` input already read into the core's form: amounts are core Decimals. */
class ReadDecisionInput implements DecisionInput {
  readonly #read = true;
  readonly card: CardState | null;
  readonly vault: VaultState | null;
  readonly policy: CompiledPolicy | null;
  readonly spend: SpendTotals;
  readonly cardPolicy: CompiledPolicy | null;
  readonly cardSpend: SpendTotals;
  readonly nowMs: number;
  readonly request: AuthorizationRequest;

  constructor(input: DecisionInput) {
    this.card = input.card;
    this.vault = input.vault;
    this.policy = input.policy;
    this.spend = input.spend;
    this.cardPolicy = input.cardPolicy ?? null;
    this.cardSpend = input.cardSpend ?? NO_SPEND;
    this.nowMs = input.nowMs;
    this.request = input.request;
  }

  static isRead(value: unknown): value is ReadDecisionInput {
    return typeof value === 'object' && value !== null && #read in value;
  }
}

/**
 * What `readInput` answers: a `decide` input read once, which `decide` takes without reading
 * it again. Only `readInput` makes one (and, inside spendgate, the authorize path).
 */
export type ReadInput = ReadDecisionInput;

export const isReadInput = (value: unknown): value is ReadInput => ReadDecisionInput.isRead(value);

/**
 * Reads and checks a `decide` input once, as `decide` does (the same refusals, the same
 * exact amounts), and answers it in the core's form, frozen: `decide(readInput(input))` is
 * `decide(input)`, and deciding a read input again costs the decision alone. For callers that
 * decide the same input more than once, or read their input where it enters (an HTTP handler,
 * a queue consumer) and decide it later.
 *
 * Spend the policy reads is read here too; a spend aggregate that cannot be read is kept as
 * given, and refused when a decision comes to read it, exactly where `decide` refuses it.
 */
export function readInput(input: DecideInput): ReadInput {
  const read = readDecisionInput(input);
  return frozen(
    new ReadDecisionInput({
      card: read.card === null ? null : Object.freeze({ ...read.card }),
      vault: read.vault === null ? null : Object.freeze({ ...read.vault }),
      policy: read.policy,
      spend: frozenSpend(read.spend, read.policy),
      cardPolicy: read.cardPolicy ?? null,
      cardSpend: Object.freeze({ ...(read.cardSpend ?? NO_SPEND) }),
      nowMs: read.nowMs,
      request: frozenRequest(read.request),
    }),
  );
}

/**
 * An input the caller has read into the core's form itself, marked as read without reading
 * it: the authorize path, whose edge parsed every amount into a core Decimal and whose spend
 * comes from its own counters. Not for library callers (it is not exported from the library):
 * an input not in the core's form would be decided wrongly instead of refused.
 */
export function asReadInput(input: DecisionInput): ReadInput {
  return new ReadDecisionInput(input);
}

/** `value`, frozen (Object.freeze's type would drop the class's private brand). */
function frozen<T extends object>(value: T): T {
  Object.freeze(value);
  return value;
}

function frozenSpend(spend: SpendTotals, policy: CompiledPolicy | null): SpendTotals {
  if (policy === null) return Object.freeze({ ...spend });
  try {
    return Object.freeze({ ...readSpend(spend, policy, 'spend') });
  } catch (error) {
    // Refused when a decision reads it (decide reads spend only once the policy is reached).
    if (!(error instanceof SpendgateError)) throw error;
    return Object.freeze({ ...spend });
  }
}

function frozenRequest(request: AuthorizationRequest): AuthorizationRequest {
  const merchant: Merchant = Object.freeze({ ...request.merchant });
  const amount: Decimal = request.amount;
  return Object.freeze({ ...request, amount, merchant });
}

/** Facts read once by `readFacts`, for one currency; `evaluate` takes them without reading. */
class ReadEvaluationFacts implements EvaluationInput {
  readonly #read = true;
  readonly request: AuthorizationRequest;
  readonly spend: SpendTotals;
  readonly nowMs: number;
  /** The policy currency's code the amount was read in. */
  readonly currency: string;
  /** The name the caller gave spend under (`spend`, or the deprecated `spent`), for refusals. */
  readonly spendParam: string;

  constructor(input: EvaluationInput, spendParam: string) {
    this.request = input.request;
    this.spend = input.spend;
    this.nowMs = input.nowMs;
    this.currency = input.request.currency;
    this.spendParam = spendParam;
  }

  static isRead(value: unknown): value is ReadEvaluationFacts {
    return typeof value === 'object' && value !== null && #read in value;
  }
}

/** What `readFacts` answers: `evaluate`'s facts read once, taken by `evaluate` as they are. */
export type ReadFacts = ReadEvaluationFacts;

export const isReadFacts = (value: unknown): value is ReadFacts =>
  ReadEvaluationFacts.isRead(value);

/** Facts read by evaluate's reader, frozen and marked as read. */
export function readFactsOnce(
  input: EvaluationInput,
  spendParam: string,
  policy: CompiledPolicy,
): ReadFacts {
  let spend: SpendTotals;
  try {
    spend = readSpend(input.spend, policy, spendParam);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    spend = input.spend;
  }
  return frozen(
    new ReadEvaluationFacts(
      {
        request: frozenRequest(input.request),
        spend: Object.freeze({ ...spend }),
        nowMs: input.nowMs,
      },
      spendParam,
    ),
  );
}
