import type { ErrorCode } from '../errors/catalogue.js';
import { givenWords } from '../errors/given.js';
import { fieldSubject, formatPath, parsePath, SpendgateError } from '../errors/spendgate-error.js';
import {
  amountIn,
  isCheckedAmount,
  type AmountInput,
  type AmountLike,
  type ParseAmountOptions,
} from '../money/amount.js';
import type { Decimal } from '../money/decimal.js';
import { assert, InvariantError } from '../assert.js';
import { currencyOf, type CurrencyInfo } from '../money/currencies.js';
import { BILLING_TOTAL, type SpendTotals } from '../policy/aggregates.js';
import { isCompiledPolicy, type CompiledPolicy } from '../policy/compile.js';
import type {
  AuthorizationRequest,
  EvaluationInput,
  Merchant,
} from '../policy/evaluation-input.js';
import type { CardState, CardStatus, DecisionInput, VaultState, VaultStatus } from './decide.js';

/*
 * The library's inputs, read at its edge. `decide` and `evaluate` take what a caller has (plain
 * objects, amounts as Decimals of any copy of decimal.js, strings or numbers) and read it once
 * into what the generated evaluators read: core Decimals, checked strings, every aggregate the
 * policy needs. A fault is a SpendgateError naming the field (`request.amount`,
 * `spend["amount:daily"]`) and what was given there, never a TypeError from deep inside.
 *
 * Reading costs a few type checks per field and allocates nothing when the input is already
 * in the core's own form (the service's authorize path): the same objects are handed on.
 */

/** Spend aggregates as a caller gives them: amounts in any form, counts as integers. */
export type SpendInput = Readonly<Record<string, AmountLike>>;

/**
 * A status as a caller may hold it: one of `Status`, or any string (checked when read), so an
 * object literal held in a variable, whose status TypeScript widens to `string`, is taken
 * without `as const`. `string & {}` keeps the literals offered by an editor.
 */
export type StatusInput<Status extends string> = Status | (string & {});

/** A card as `decide` takes it: `status` one of active, frozen, cancelled. */
export interface CardInput {
  readonly id: string;
  readonly vaultId: string;
  readonly status: StatusInput<CardStatus>;
}

/** A vault as `decide` takes it: `available` in any amount form. */
export interface VaultInput {
  readonly id: string;
  readonly status: StatusInput<VaultStatus>;
  readonly currency: string;
  /** Ledger minus open holds, before this authorization: not negative. */
  readonly available: AmountLike;
}

/** A card network's request as `decide` takes it: `amount` in any amount form. */
export interface RequestInput {
  readonly cardId: string;
  readonly amount: AmountLike;
  readonly currency: string;
  readonly merchant: Merchant;
  /** The card's billing currency (contract v1.2, section 16), ISO 4217; optional. */
  readonly billingCurrency?: string | undefined;
  /** What the merchant charged in, ISO 4217; optional (absent: the billing currency). */
  readonly merchantCurrency?: string | undefined;
  /**
   * What the network asked in the card's billing currency, when the request was converted to
   * the vault's asset: what limits written in a billing currency count. Absent: such limits
   * decline the request (they cannot count it).
   */
  readonly billing?: { readonly amount: AmountLike; readonly currency: string } | undefined;
}

/** What every `decide` input holds, whichever name it gives its time under. */
interface DecideInputFields {
  /** null when no card has the request's card id. */
  readonly card: CardInput | null;
  /** The card's vault; null only when `card` is null. */
  readonly vault: VaultInput | null;
  /** The vault's policy from `compilePolicy`, or null when it has none. */
  readonly policy: CompiledPolicy | null;
  /** The aggregates `policy.aggregates` names, by key; others are not read. */
  readonly spend?: SpendInput | undefined;
  /**
   * The card's own policy (a card-level policy), decided after the vault's: an authorization
   * passes both. Absent or null when the card has none.
   */
  readonly cardPolicy?: CompiledPolicy | null | undefined;
  /** The card's own spend, the aggregates `cardPolicy.aggregates` names. */
  readonly cardSpend?: SpendInput | undefined;
  readonly request: RequestInput;
}

/**
 * What `decide` takes: a `DecisionInput` whose amounts may be Decimals of any copy of
 * decimal.js, decimal strings or numbers, whose `spend` may be left out when the policy reads
 * none, and whose time is `at`, as in `evaluate`'s facts.
 */
export type DecideInput = DecideInputFields &
  (
    | {
        /**
         * When the authorization is decided: a Date, epoch milliseconds, or an ISO 8601
         * timestamp with its zone ("2026-11-18T10:00:00Z").
         */
        readonly at: Date | number | string;
        readonly nowMs?: undefined;
      }
    | {
        /**
         * @deprecated Since 0.2: `at`, the name `evaluate` uses too (it takes epoch
         * milliseconds as well). Still read, for one version; giving both is refused.
         */
        readonly nowMs: number;
        readonly at?: undefined;
      }
  );

const CARD_STATUSES: ReadonlySet<unknown> = new Set<CardStatus>(['active', 'frozen', 'cancelled']);
const VAULT_STATUSES: ReadonlySet<unknown> = new Set<VaultStatus>(['active', 'frozen', 'closed']);
const NO_SPEND_INPUT: SpendInput = Object.freeze({});

/** A refusal of a library input: "<field> <predicate>.", `param` the field's path. */
export function refusal(code: ErrorCode, param: string, predicate: string): SpendgateError {
  return new SpendgateError(code, `${fieldSubject(parsePath(param), param)} ${predicate}.`, param);
}

type Fields = Readonly<Record<string, unknown>>;

/** `value` as an object whose fields can be read; missing or of another type, refused. */
export function readObject(value: unknown, param: string): Fields {
  if (value === undefined) throw refusal('parameter_missing', param, 'is required');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refusal('parameter_invalid', param, `must be an object, not ${givenWords(value)}`);
  }
  return value as Fields;
}

export function readString(value: unknown, param: string): string {
  if (value === undefined) throw refusal('parameter_missing', param, 'is required');
  if (typeof value !== 'string') {
    throw refusal('parameter_invalid', param, `must be a string, not ${givenWords(value)}`);
  }
  return value;
}

function readOptionalString(value: unknown, param: string): void {
  if (value !== undefined) readString(value, param);
}

/** A required amount: missing is `parameter_missing`, anything amiss `invalid_amount`. */
export function readAmount(
  value: unknown,
  currency: CurrencyInfo,
  options: ParseAmountOptions & { readonly param: string },
): Decimal {
  if (isCheckedAmount(value, currency, options.total === true)) return value;
  if (value === undefined) throw refusal('parameter_missing', options.param, 'is required');
  // amountIn checks the type of whatever it is handed and refuses any other, naming it.
  return amountIn(value as AmountInput, currency, options);
}

const UNNAMED_TOTAL: ParseAmountOptions = Object.freeze({ total: true });

/**
 * A spend total at `param[key]`. Read first without a name, so that the common case builds no
 * param text; a refusal is read again with its name, which throws the same refusal, named.
 */
function readTotalAt(value: unknown, currency: CurrencyInfo, param: string, key: string): Decimal {
  if (isCheckedAmount(value, currency, true)) return value;
  try {
    return amountIn(value as AmountInput, currency, UNNAMED_TOTAL);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
  }
  readAmount(value, currency, { param: keyPath(param, key), total: true });
  throw new InvariantError('a refused total is refused again when named');
}

/** `spend["amount:daily"]`: an aggregate's key under its object's path. */
function keyPath(param: string, key: string): string {
  return formatPath([...parsePath(param), key]);
}

/** The merchant as the evaluators read it: name, MCC and country, city and id if present. */
export function readMerchant(value: unknown, param: string): Merchant {
  const merchant = readObject(value, param);
  readString(merchant['name'], `${param}.name`);
  readString(merchant['mcc'], `${param}.mcc`);
  readString(merchant['country'], `${param}.country`);
  readOptionalString(merchant['city'], `${param}.city`);
  readOptionalString(merchant['id'], `${param}.id`);
  return merchant as unknown as Merchant;
}

/** A policy `compilePolicy` compiled, or null for none. */
export function readPolicy(value: unknown, param: string): CompiledPolicy | null {
  if (value === null) return null;
  if (value === undefined) throw refusal('parameter_missing', param, 'is required (null for none)');
  if (!isCompiledPolicy(value)) {
    throw refusal(
      'parameter_invalid',
      param,
      `must be a policy from compilePolicy of this spendgate, not ${givenWords(value)}`,
    );
  }
  return value;
}

/**
 * The name a field was given under: `name`, or `deprecated`, the name it had before (which is
 * read for one version). Both given is refused, rather than one silently winning.
 */
export function aliasedName(fields: Fields, name: string, deprecated: string): string {
  if (fields[deprecated] === undefined) return name;
  if (fields[name] !== undefined) {
    throw refusal(
      'parameter_invalid',
      deprecated,
      `is the deprecated name of ${name}: give one of them, not both`,
    );
  }
  return deprecated;
}

// A timestamp with a date, a time and a zone; Date.parse reads the rest of ISO 8601 loosely.
const ISO_TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const ISO_TIMESTAMP_LENGTH_MAX = 40;

/** A Date, epoch milliseconds or an ISO 8601 timestamp with zone, as epoch milliseconds. */
export function readInstant(value: unknown, param: string): number {
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

/** The epoch time a decision is made at, in milliseconds. */
export function readEpochMs(value: unknown, param: string): number {
  if (value === undefined) throw refusal('parameter_missing', param, 'is required');
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw refusal(
      'parameter_invalid',
      param,
      `must be a finite epoch time in milliseconds, not ${givenWords(value)}`,
    );
  }
  return value;
}

/**
 * `input` with its spend read (`readSpend`): for a decision whose evaluators found an
 * aggregate not in the core's form. The spend read is a copy, or the same object only if the
 * evaluators and the reader disagree, which is a bug.
 */
export function withSpendRead<T extends EvaluationInput>(
  input: T,
  policy: CompiledPolicy | null,
  param: string,
): T {
  assert(policy !== null, 'only a policy reads spend');
  const spend = readSpend(input.spend, policy, param);
  assert(spend !== input.spend, 'the evaluators refuse only spend the reader converts or refuses');
  return { ...input, spend };
}

/**
 * The aggregates `policy` reads, each checked: an amount (a total, so above AMOUNT_MAX is
 * fine) for an `amount` aggregate, a non-negative integer for a `count` one. Returns `spend`
 * itself when every value is already in the core's form, a copy of the needed keys otherwise.
 */
export function readSpend(value: unknown, policy: CompiledPolicy, param: string): SpendTotals {
  const spend = value === undefined ? NO_SPEND_INPUT : readObject(value, param);
  let read: Record<string, SpendTotals[string]> | null = null;
  for (const aggregate of policy.aggregates) {
    const key = aggregate.key;
    // No aggregate key ("amount:daily") names a property every object inherits.
    const given = spend[key];
    if (given === undefined) {
      throw refusal(
        'parameter_missing',
        keyPath(param, key),
        'is required: the policy reads this aggregate (see policy.aggregates)',
      );
    }
    let total: SpendTotals[string];
    if (aggregate.measure === 'count') {
      if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0) {
        throw refusal(
          'parameter_invalid',
          keyPath(param, key),
          `must be a count of transactions, an integer of 0 or more, not ${givenWords(given)}`,
        );
      }
      total = given;
    } else {
      // A billing-currency aggregate (issue 35) sums amounts of another currency than the asset.
      const info = aggregate.currency === null ? policy.currency : BILLING_TOTAL;
      total = readTotalAt(given, info, param, key);
    }
    if (total !== given) read ??= {};
    if (read !== null) read[key] = total;
  }
  if (read === null) return spend as SpendTotals;
  // Some value was converted: hand on a copy holding every needed key in the core's form.
  for (const aggregate of policy.aggregates) {
    read[aggregate.key] ??= spend[aggregate.key] as SpendTotals[string];
  }
  return read;
}

const REQUEST_AMOUNT: ParseAmountOptions & { readonly param: string } = Object.freeze({
  param: 'request.amount',
});
const VAULT_AVAILABLE: ParseAmountOptions & { readonly param: string } = Object.freeze({
  param: 'vault.available',
  total: true,
});

/**
 * `decide`'s input, read and checked: the same object when it is already in the core's form,
 * a copy with its amounts converted otherwise. Refuses with a SpendgateError naming the field.
 */
export function readDecisionInput(input: unknown): DecisionInput {
  const fields = readObject(input, 'input');
  const request = readRequest(fields['request']);
  const nowMs =
    aliasedName(fields, 'at', 'nowMs') === 'at'
      ? readInstant(fields['at'], 'at')
      : readEpochMs(fields['nowMs'], 'nowMs');
  const card = readCard(fields['card'], request.cardId);
  const vault = readVault(fields['vault'], card);
  const policy = readPolicy(fields['policy'], 'policy');
  if (policy !== null && vault !== null && policy.currency.code !== vault.currency) {
    throw refusal(
      'parameter_invalid',
      'policy',
      `was compiled for ${policy.currency.code}, but the vault holds ${vault.currency}`,
    );
  }
  // Spend is read only if the evaluators find it not in the core's form (see `decide`).
  const spend =
    fields['spend'] === undefined ? NO_SPEND_INPUT : readObject(fields['spend'], 'spend');
  const { cardPolicy, cardSpend } = readCardPolicy(fields, vault);
  if (
    nowMs === fields['nowMs'] &&
    request === fields['request'] &&
    vault === fields['vault'] &&
    spend === fields['spend'] &&
    card === fields['card'] &&
    cardSpend === fields['cardSpend']
  ) {
    return input as DecisionInput;
  }
  return {
    card,
    vault,
    policy,
    spend: spend as SpendTotals,
    nowMs,
    request,
    ...(cardPolicy === null || cardSpend === undefined ? {} : { cardPolicy, cardSpend }),
  };
}

/**
 * The card's own policy and its spend. The spend is read at once (unlike the vault's): card
 * policies are few, and a read that returns the same object when it is in the core's form
 * costs a few checks.
 */
function readCardPolicy(
  fields: Fields,
  vault: VaultState | null,
): { cardPolicy: CompiledPolicy | null; cardSpend: SpendTotals | undefined } {
  const given = fields['cardPolicy'];
  const cardPolicy = given === undefined ? null : readPolicy(given, 'cardPolicy');
  if (cardPolicy === null) {
    return { cardPolicy, cardSpend: fields['cardSpend'] as SpendTotals | undefined };
  }
  if (vault !== null && cardPolicy.currency.code !== vault.currency) {
    throw refusal(
      'parameter_invalid',
      'cardPolicy',
      `was compiled for ${cardPolicy.currency.code}, but the vault holds ${vault.currency}`,
    );
  }
  return { cardPolicy, cardSpend: readSpend(fields['cardSpend'], cardPolicy, 'cardSpend') };
}

function readRequest(value: unknown): AuthorizationRequest {
  const request = readObject(value, 'request');
  const cardId = readString(request['cardId'], 'request.cardId');
  const code = readString(request['currency'], 'request.currency');
  const currency = currencyOf(code, 'request.currency');
  const merchant = readMerchant(request['merchant'], 'request.merchant');
  const given = request['amount'];
  const amount = readAmount(given, currency, REQUEST_AMOUNT);
  const billingCurrency = readIsoCode(request['billingCurrency'], 'request.billingCurrency');
  const merchantCurrency = readIsoCode(request['merchantCurrency'], 'request.merchantCurrency');
  const givenBilling = request['billing'];
  const billing = readBilling(givenBilling);
  if (amount === given && billing === givenBilling) {
    return request as unknown as AuthorizationRequest;
  }
  return {
    cardId,
    amount,
    currency: currency.code,
    merchant,
    billingCurrency,
    merchantCurrency,
    ...(billing === undefined ? {} : { billing }),
  };
}

type BillingAmount = NonNullable<AuthorizationRequest['billing']>;

/** `request.billing`: an amount in an ISO 4217 currency, read exactly; absent stays absent. */
function readBilling(value: unknown): BillingAmount | undefined {
  if (value === undefined) return undefined;
  const billing = readObject(value, 'request.billing');
  const currency = readIsoCode(billing['currency'], 'request.billing.currency');
  if (currency === undefined) {
    throw refusal('parameter_missing', 'request.billing.currency', 'is required');
  }
  const given = billing['amount'];
  const amount = readAmount(given, BILLING_TOTAL, { param: 'request.billing.amount' });
  if (amount === given && currency === billing['currency']) return value as BillingAmount;
  return { amount, currency };
}

/** An optional ISO 4217 code (EUR) or vault asset (USDC): absent stays absent. */
function readIsoCode(value: unknown, param: string): string | undefined {
  if (value === undefined) return undefined;
  const code = readString(value, param);
  if (!/^[A-Z]{3,4}$/.test(code)) {
    throw refusal('parameter_invalid', param, 'must be an ISO 4217 currency code, like EUR');
  }
  return code;
}

function readCard(value: unknown, cardId: string): CardState | null {
  if (value === null) return null;
  const card = readObject(value, 'card');
  const id = readString(card['id'], 'card.id');
  readString(card['vaultId'], 'card.vaultId');
  if (!CARD_STATUSES.has(card['status'])) {
    throw refusal('parameter_invalid', 'card.status', 'must be one of active, frozen, cancelled');
  }
  if (id !== cardId) {
    throw refusal(
      'parameter_invalid',
      'card.id',
      'must be the card the request names (its cardId)',
    );
  }
  return card as unknown as CardState;
}

function readVault(value: unknown, card: CardState | null): VaultState | null {
  if (card === null && (value === null || value === undefined)) return null;
  if (value === null) throw refusal('parameter_missing', 'vault', "is required: the card's vault");
  const vault = readObject(value, 'vault');
  const id = readString(vault['id'], 'vault.id');
  if (!VAULT_STATUSES.has(vault['status'])) {
    throw refusal('parameter_invalid', 'vault.status', 'must be one of active, frozen, closed');
  }
  const currency = currencyOf(readString(vault['currency'], 'vault.currency'), 'vault.currency');
  if (card !== null && id !== card.vaultId) {
    throw refusal('parameter_invalid', 'vault.id', "must be the card's vault (its vaultId)");
  }
  const given = vault['available'];
  const available = readAvailable(given, currency);
  if (available === given) return vault as unknown as VaultState;
  return { id, status: vault['status'] as VaultStatus, currency: currency.code, available };
}

/**
 * A vault's available balance, which may be below 0 while the vault is overdrawn (contract
 * v1.2, section 16: postings the network mandates may take it there). Read as its magnitude,
 * exactly as any total, then given its sign back.
 */
function readAvailable(given: unknown, currency: CurrencyInfo): Decimal {
  if (!isNegativeAmount(given)) return readAmount(given, currency, VAULT_AVAILABLE);
  const magnitude =
    typeof given === 'string'
      ? given.slice(1)
      : typeof given === 'number'
        ? -given
        : (given as { negated(): unknown }).negated();
  return readAmount(magnitude, currency, VAULT_AVAILABLE).negated();
}

function isNegativeAmount(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith('-') && value !== '-0';
  if (typeof value === 'number') return value < 0;
  if (typeof value !== 'object' || value === null) return false;
  // A Decimal of any copy of decimal.js: its sign is `s`, -1 below 0.
  const decimal = value as { s?: unknown; isZero?: () => boolean; negated?: unknown };
  return decimal.s === -1 && typeof decimal.negated === 'function' && decimal.isZero?.() === false;
}
