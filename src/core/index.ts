/*
 * The pure core: money, policy compilation and the authorization decision. No I/O; imports
 * nothing outside src/core but zod and decimal.js (ARCHITECTURE.md, invariants).
 */

export { assert, InvariantError } from './assert.js';
export {
  ERROR_CATALOGUE,
  isErrorCode,
  type CatalogueEntry,
  type ErrorCode,
  type ErrorType,
} from './errors/catalogue.js';
export { formatPath, PolicyInvalidError, SpendgateError } from './errors/spendgate-error.js';
export { Decimal, isDecimal, ZERO } from './money/decimal.js';
export { compareDecimalInteger, compareDecimals } from './money/compare.js';
export {
  CURRENCIES,
  CURRENCY_CODES,
  currencyInfoOf,
  currencyOf,
  isCurrencyCode,
  SCALE_MAX,
  type CurrencyCode,
  type CurrencyInfo,
} from './money/currencies.js';
export {
  AMOUNT_MAX,
  formatAmount,
  ImpreciseNumber,
  JSON_NUMBER_DIGITS_MAX,
  significantDigits,
  amountIn,
  isDecimalJsValue,
  parseAmount,
  TOTAL_LIMIT,
  storedAmount,
  type AmountInput,
  type AmountLike,
  type DecimalJsValue,
  type ParseAmountOptions,
} from './money/amount.js';
export {
  dayNumberOf,
  dayOfWeekUtc,
  hourUtc,
  isoDate,
  isoTimestamp,
  MS_PER_DAY,
  utcDayNumber,
  windowStartDay,
} from './time.js';
export {
  aggregateSpec,
  NO_SPEND,
  type AggregateInterval,
  type AggregateMeasure,
  type AggregateSpec,
  type SpendTotals,
} from './policy/aggregates.js';
export { POLICY_BOUNDS, TEMPLATE_BOUNDS } from './policy/bounds.js';
export { COUNTRY_CODES, isCountryCode, MCC_PATTERN } from './policy/countries.js';
export type { AuthorizationRequest, EvaluationInput, Merchant } from './policy/evaluation-input.js';
export { FACT_NAMES, FACTS, type FactName } from './policy/facts.js';
export { OPERATORS, type Operator } from './policy/operators.js';
export {
  isStorableText,
  LIMIT_INTERVALS,
  policySchema,
  RULE_MODES,
  STORABLE_TEXT_ERROR,
  type LimitDocument,
  type LimitInterval,
  type PolicyDocument,
  type RuleDocument,
  type RuleMode,
  type TemplateRefDocument,
} from './policy/schema.js';
export {
  EMPTY_TEMPLATE_LIBRARY,
  templateSchema,
  type TemplateDocument,
  type TemplateLibrary,
  type TemplateParam,
} from './policy/template-schema.js';
export { DEFAULT_CURRENCY, withDefaultTemplates } from './policy/compile-options.js';
export {
  compilePolicy,
  isCompiledPolicy,
  type CompiledCheck,
  type CompiledPolicy,
  type CompileOptions,
} from './policy/compile.js';
export { CompiledPolicyCache } from './policy/policy-cache.js';
export type {
  CardInput,
  DecideInput,
  RequestInput,
  SpendInput,
  StatusInput,
  VaultInput,
} from './decision/read-input.js';
export { evaluate, readFacts, type Facts } from './decision/evaluate.js';
export { readInput, type ReadFacts, type ReadInput } from './decision/read-once.js';
export {
  limitStatuses,
  windowEndMs,
  type LimitStatus,
  type PolicyLimit,
} from './policy/limit-status.js';
export {
  decide,
  requiredAggregates,
  decisionVaultOf,
  type CardState,
  type CardStatus,
  type DecisionInput,
  type VaultState,
  type VaultStatus,
} from './decision/decide.js';
export {
  assetPair,
  assetPriceOf,
  billingPair,
  DEFAULT_PRICE_BOUNDS,
  DEFAULT_SOL_HOLD_BUFFER,
  NO_PRICES,
  NO_PRICING,
  rateRecordOf,
  readingRefusal,
  type FeedReading,
  type Pricing,
  type RateRecord,
  type PriceBook,
  type PriceBounds,
  type ReadingRefusal,
} from './decision/price-feeds.js';
export {
  convertAtPrice,
  isAtPar,
  isDecision,
  withHoldBuffer,
  type FeedLeg,
  RATE_UNAVAILABLE,
  toVaultAsset,
  countedBilling,
  UNCONVERTIBLE_CURRENCY,
  type AssetAmount,
  type AssetConversionInput,
  type AssetPrice,
  type MoneyAmount,
} from './decision/billing.js';
export {
  isAmountDecline,
  partialApprovalCap,
  withPartialApproval,
  type PartialDecision,
} from './decision/partial.js';
export {
  BACKTEST_BOUNDS,
  BacktestReplay,
  backtestWindow,
  OTHER_RULES,
  type BacktestChange,
  type BacktestExample,
  type BacktestResult,
  type BacktestWindow,
  type DraftDecision,
  type RecordedDecision,
  type ReplayRelease,
  type ReplayRow,
  type RuleCounts,
  type ShadowCount,
} from './decision/backtest.js';
export {
  replayedOutcome,
  STAND_IN_APPROVED,
  STAND_IN_DECLINED,
  STAND_IN_RULE,
  standInOutcome,
} from './decision/stand-in.js';
export {
  APPROVED,
  NO_SHADOW_MATCHES,
  type Decision,
  type DeclineCode,
  type DeclineReason,
  type PolicySource,
  type ShadowMatch,
} from './decision/result.js';
export type {
  AccountRecord,
  AuthorizationOutcome,
  BacktestRecord,
  BacktestResultRecord,
  BacktestStatus,
  BalanceSnapshotRecord,
  CardRecord,
  ProcessorCardRef,
  PolicyRecord,
  PolicyVersionRecord,
  SettlementError,
  ChainDepositRecord,
  ChainDepositSource,
  SettlementRecord,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  Metadata,
  Mode,
  Scope,
  TransactionRecord,
  TransactionLifecycle,
  FiatAmount,
  PolicyWouldDecline,
  TransactionStatus,
  TransactionType,
  TransferRecord,
  TransferStatus,
  VaultRecord,
} from './objects/records.js';
export {
  presentAuthorization,
  presentBalance,
  presentBalanceSnapshot,
  presentCard,
  presentChainDeposit,
  presentFiat,
  presentRate,
  presentTransaction,
  presentTransactionMetadata,
  presentTransfer,
  presentVault,
  type AuthorizationAsked,
} from './objects/presenters.js';
export { backtestResultRecord } from './objects/backtest-results.js';
export {
  presentAccount,
  presentBacktest,
  presentBacktestResult,
  presentCardDetails,
  presentDeletedPolicy,
  presentDeletedWebhookEndpoint,
  presentPolicy,
  presentSettlement,
  presentTwoFactorEnrolment,
  presentWebhookDelivery,
  presentWebhookEndpoint,
  presentWebhookTest,
  type PresentedBacktestResult,
} from './objects/platform-presenters.js';
export {
  presentPolicyLimits,
  presentPolicyVersion,
  type LimitsOf,
} from './objects/policy-presenters.js';
export {
  DEFAULT_HOLD_EXPIRY,
  holdExpiresAtMs,
  isLongHoldMcc,
  type HoldExpirySettings,
} from './holds/hold-expiry.js';
