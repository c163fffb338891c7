import { formatAmount } from '../money/amount.js';
import { isoTimestamp } from '../time.js';
import { isCurrencyCode, type CurrencyInfo } from '../money/currencies.js';
import { ZERO, type Decimal } from '../money/decimal.js';
import type { RateRecord } from '../decision/price-feeds.js';
import type {
  AuthorizationOutcome,
  BalanceSnapshotRecord,
  CardRecord,
  ChainDepositRecord,
  FiatAmount,
  Metadata,
  TransactionRecord,
  TransferRecord,
  VaultRecord,
} from './records.js';

function iso(epochMs: number): string;
function iso(epochMs: number | null): string | null;
function iso(epochMs: number | null): string | null {
  return epochMs === null ? null : isoTimestamp(epochMs);
}

/*
 * The presenter layer: records as the API answers them (contract section 8), amounts as decimal
 * strings, times as ISO 8601 UTC. The only place the wire format of an object is written: routes
 * answer these, and events carry exactly these objects, so a webhook receiver sees what a GET
 * sees. Deliberately absent: card numbers and CVVs, transaction metadata (contract section 14).
 * The money path's objects are here; the platform's (account, policy, settlement, webhooks) in
 * platform-presenters.ts.
 */

export function presentVault(vault: VaultRecord) {
  return {
    id: vault.id,
    object: 'vault' as const,
    name: vault.name,
    currency: vault.currency,
    network: vault.network,
    status: vault.status,
    balance: balanceFigures(vault),
    metadata: vault.metadata,
    createdAt: iso(vault.createdAtMs),
    updatedAt: iso(vault.updatedAtMs),
    frozenAt: iso(vault.frozenAtMs),
    closedAt: iso(vault.closedAtMs),
    depositAddress: vault.depositAddress ?? null,
    overdrawnAt: iso(vault.overdrawnAtMs ?? null),
  };
}

export function presentCard(card: CardRecord) {
  return {
    id: card.id,
    object: 'card' as const,
    vaultId: card.vaultId,
    status: card.status,
    last4: card.last4,
    expMonth: card.expMonth,
    expYear: card.expYear,
    cardholderName: card.cardholderName,
    metadata: card.metadata,
    billingCurrency: card.billingCurrency,
    createdAt: iso(card.createdAtMs),
    cancelledAt: iso(card.cancelledAtMs),
    processorCard: card.processorCard ?? null,
  };
}

export function presentTransaction(transaction: TransactionRecord) {
  const amount = (value: typeof transaction.amount) => formatAmount(value, transaction.currency);
  return {
    id: transaction.id,
    object: 'transaction' as const,
    type: transaction.type,
    status: transaction.status,
    vaultId: transaction.vaultId,
    cardId: transaction.cardId,
    transferId: transaction.transferId,
    amount: amount(transaction.amount),
    capturedAmount: amount(transaction.capturedAmount),
    heldAmount: amount(transaction.holdRemaining),
    currency: transaction.currency,
    merchant:
      transaction.merchant === null
        ? null
        : {
            name: transaction.merchant.name,
            mcc: transaction.merchant.mcc,
            country: transaction.merchant.country,
            city: transaction.merchant.city ?? null,
            id: transaction.merchant.id ?? null,
          },
    declineCode: transaction.declineCode,
    declineReason: transaction.declineReason,
    // As Simulate Policy's decision reports them: { rule, message } per matching shadow rule.
    shadowMatches: transaction.shadowMatches.map((match) => ({
      rule: match.rule,
      message: match.message,
    })),
    failureReason: transaction.failureReason,
    createdAt: iso(transaction.createdAtMs),
    completedAt: iso(transaction.completedAtMs),
    hasMetadata: transaction.hasMetadata,
    // A deposit credited from the chain: its transfer's signature, sender and slot.
    onChain:
      transaction.onChain == null
        ? null
        : {
            signature: transaction.onChain.signature,
            sender: transaction.onChain.sender,
            slot: transaction.onChain.slot,
          },
    ...presentLifecycle(transaction),
  };
}

/**
 * ISO 4217 currencies whose minor unit is not the cent (JPY 0, BHD 3): their amounts are shown
 * to that many digits; every other billing or merchant currency to two. The table is ISO's
 * (currency-codes at the HTTP edge checks the codes); the core keeps the exceptions only.
 */
const MINOR_UNITS: ReadonlyMap<string, number> = new Map([
  ...['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND']
    .concat(['VUV', 'XAF', 'XOF', 'XPF'])
    .map((code): [string, number] => [code, 0]),
  ...['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'].map((code): [string, number] => [code, 3]),
  ['CLF', 4],
  ['UYW', 4],
]);

export function presentFiat(value: FiatAmount) {
  if (isCurrencyCode(value.currency)) {
    return { amount: formatAmount(value.amount, value.currency), currency: value.currency };
  }
  const places = Math.max(MINOR_UNITS.get(value.currency) ?? 2, value.amount.decimalPlaces());
  return { amount: value.amount.toFixed(places), currency: value.currency };
}

/** A recorded rate as the API shows it: a transaction's `rate`, and a capture's own. */
export function presentRate(rate: RateRecord) {
  return {
    value: rate.value,
    source: rate.source,
    at: isoTimestamp(rate.atMs),
    // Each feed the price was read from: its account, publish time and confidence.
    feeds: (rate.feeds ?? []).map((feed) => ({
      pair: feed.pair,
      address: feed.address,
      price: feed.price,
      confidence: feed.confidence,
      publishedAt: isoTimestamp(feed.publishTimeMs),
    })),
  };
}

/** The section 16 fields of a transaction; a record without them shows the column defaults. */
function presentLifecycle(transaction: TransactionRecord) {
  const lifecycle = transaction.lifecycle;
  // A row from before billing columns: what it was billed is what it recorded.
  const billing = lifecycle?.billing ?? {
    amount: transaction.amount,
    currency: transaction.currency,
  };
  const decline = lifecycle?.policyWouldDecline ?? null;
  return {
    billing: presentFiat(billing),
    merchantAmount:
      lifecycle?.merchantAmount == null ? null : presentFiat(lifecycle.merchantAmount),
    rate: lifecycle?.rate == null ? null : presentRate(lifecycle.rate),
    refundedAmount: formatAmount(lifecycle?.refundedAmount ?? ZERO, transaction.currency),
    expiresAt: iso(lifecycle?.expiresAtMs ?? null),
    advice: lifecycle?.advice ?? false,
    partial: lifecycle?.partial ?? false,
    policyWouldDecline:
      decline === null
        ? null
        : { declineCode: decline.declineCode, declineReason: decline.declineReason },
    originalTransactionId: lifecycle?.originalTransactionId ?? null,
  };
}

export function presentTransfer(transfer: TransferRecord) {
  return {
    id: transfer.id,
    object: 'transfer' as const,
    fromVaultId: transfer.fromVaultId,
    ...(transfer.kind === 'internal'
      ? { toVaultId: transfer.toVaultId }
      : { address: transfer.address }),
    amount: formatAmount(transfer.amount, transfer.currency),
    currency: transfer.currency,
    status: transfer.status,
    description: transfer.description,
    memo: transfer.memo,
    signature: transfer.signature,
    failureReason: transfer.failureReason,
    createdAt: iso(transfer.createdAtMs),
    completedAt: iso(transfer.completedAtMs),
  };
}

function balanceFigures(vault: VaultRecord) {
  return {
    available: formatAmount(vault.ledger.minus(vault.pending), vault.currency),
    pending: formatAmount(vault.pending, vault.currency),
    ledger: formatAmount(vault.ledger, vault.currency),
  };
}

/** A vault's balance as of `asOfMs` (Get Vault Balance). */
export function presentBalance(vault: VaultRecord, asOfMs: number) {
  return {
    object: 'balance' as const,
    vaultId: vault.id,
    currency: vault.currency,
    ...balanceFigures(vault),
    asOf: iso(asOfMs),
  };
}

/** A transfer found at a deposit address: credited, swept or ignored (and why). */
export function presentChainDeposit(deposit: ChainDepositRecord) {
  return {
    id: deposit.id,
    object: 'chain_deposit' as const,
    vaultId: deposit.vaultId,
    status: deposit.status,
    ignoredReason: deposit.ignoredReason,
    currency: deposit.currency,
    mint: deposit.mint,
    amount: deposit.amount,
    signature: deposit.signature,
    instructionIndex: deposit.instructionIndex,
    innerIndex: deposit.innerIndex,
    slot: deposit.slot,
    sender: deposit.sender,
    transactionId: deposit.transactionId,
    foundAt: iso(deposit.foundAtMs),
    creditedAt: iso(deposit.creditedAtMs),
    sweptAt: iso(deposit.sweptAtMs),
  };
}

export function presentBalanceSnapshot(snapshot: BalanceSnapshotRecord) {
  return {
    object: 'balance_snapshot' as const,
    vaultId: snapshot.vaultId,
    // The store keys snapshots by `day`; the contract names the field `date`.
    date: snapshot.day,
    currency: snapshot.currency,
    ledger: formatAmount(snapshot.ledger, snapshot.currency),
    available: formatAmount(snapshot.available, snapshot.currency),
    pending: formatAmount(snapshot.pending, snapshot.currency),
    final: snapshot.final,
  };
}

/** What was asked: the answer's figures when nothing was recorded. */
export interface AuthorizationAsked {
  readonly cardId: string | null;
  /** The vault asked about (Simulate Policy names it; Authorize learns it from the card). */
  readonly vaultId?: string;
  readonly amount: Decimal;
  readonly currency: CurrencyInfo;
}

/** The decision object of Authorize (contract section 10). */
export function presentAuthorization(
  outcome: AuthorizationOutcome,
  asked: AuthorizationAsked,
  decidedInMicros: number,
) {
  const { decision, transaction } = outcome;
  return {
    id: transaction?.id ?? null,
    object: 'authorization' as const,
    approved: decision.approved,
    status: decision.approved ? ('pending' as const) : ('declined' as const),
    declineCode: decision.declineCode,
    declineReason: decision.declineReason,
    // A replay answers what was recorded, whatever this callback's body says.
    amount:
      transaction === null
        ? formatAmount(asked.amount, asked.currency)
        : formatAmount(transaction.amount, transaction.currency),
    currency: transaction?.currency ?? asked.currency.code,
    cardId: transaction?.cardId ?? asked.cardId,
    vaultId: transaction?.vaultId ?? asked.vaultId ?? null,
    standIn: outcome.standIn,
    decidedInMicros,
    shadowMatches: [...decision.shadowMatches],
    // Contract v1.2, section 16: an approval of less than was asked says so, and what was asked.
    partial: transaction?.lifecycle?.partial ?? false,
    requestedAmount:
      transaction?.lifecycle?.requestedAmount == null
        ? null
        : formatAmount(transaction.lifecycle.requestedAmount, transaction.currency),
  };
}

/** Transaction metadata (contract section 14): only through its own read, never in events. */
export function presentTransactionMetadata(transactionId: string, metadata: Metadata) {
  return { object: 'transaction_metadata' as const, transactionId, metadata };
}
