import {
  parseAmount,
  SpendgateError,
  type ImpreciseNumber,
  type MoneyAmount,
} from '../core/index.js';
import type { AuthorizeInput } from '../store/store.js';
import { isoCurrencyOf, requestCurrencyOf } from './iso-currencies.js';

/** The authorize request's fields as the schema has read them (schemas/authorization.ts). */
export interface AuthorizeFields {
  readonly cardId: string;
  readonly amount: string | number | ImpreciseNumber;
  readonly currency: string;
  readonly merchant: AuthorizeInput['merchant'];
  readonly networkTransactionId: string;
  readonly merchantAmount?: string | number | ImpreciseNumber | undefined;
  readonly merchantCurrency?: string | undefined;
  readonly partialApprovalAllowed?: boolean | undefined;
}

/**
 * The store's input from an authorize request (or an advice's): the amount read exactly to its
 * currency's scale, which is the vault's asset (USDC 6, SOL 9) or an ISO 4217 billing currency
 * (USD 2); 0 is an account verification. `merchantAmount` and `merchantCurrency` come
 * together, the amount read to the merchant currency's minor units (JPY 0, BHD 3).
 */
export function authorizeInputOf(body: AuthorizeFields): AuthorizeInput {
  const currency = requestCurrencyOf(body.currency, 'currency');
  const amount = parseAmount(body.amount, currency, { param: 'amount' });
  return {
    cardId: body.cardId,
    amount,
    currency: currency.code,
    merchant: body.merchant,
    networkTransactionId: body.networkTransactionId,
    amountScale: currency.scale,
    merchantAmount: merchantAmountOf(body),
    ...(body.partialApprovalAllowed === true ? { partialApprovalAllowed: true } : {}),
  };
}

function merchantAmountOf(body: AuthorizeFields): MoneyAmount | null {
  const { merchantAmount, merchantCurrency } = body;
  if (merchantAmount === undefined && merchantCurrency === undefined) return null;
  if (merchantAmount === undefined || merchantCurrency === undefined) {
    const missing = merchantAmount === undefined ? 'merchantAmount' : 'merchantCurrency';
    throw new SpendgateError(
      'parameter_missing',
      'merchantAmount and merchantCurrency come together.',
      missing,
    );
  }
  const currency = isoCurrencyOf(merchantCurrency, 'merchantCurrency');
  return {
    amount: parseAmount(merchantAmount, currency, { param: 'merchantAmount' }),
    currency: currency.code,
  };
}
