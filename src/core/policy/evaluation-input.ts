import type { Decimal } from '../money/decimal.js';
import type { SpendTotals } from './aggregates.js';

export interface Merchant {
  readonly name: string;
  /** Four-digit merchant category code. */
  readonly mcc: string;
  /** ISO 3166-1 alpha-2. */
  readonly country: string;
  readonly city?: string | undefined;
  readonly id?: string | undefined;
}

/** A card network's authorization request, amounts already parsed at the edge. */
export interface AuthorizationRequest {
  readonly cardId: string;
  readonly amount: Decimal;
  readonly currency: string;
  readonly merchant: Merchant;
  /** The card's billing currency (ISO 4217); absent: `currency` stands for it. */
  readonly billingCurrency?: string | undefined;
  /** What the merchant charged in (ISO 4217); absent: the billing currency. */
  readonly merchantCurrency?: string | undefined;
  /**
   * What the network asked in the card's billing currency, when the request was converted
   * (or is at par: USDC's is USD): what limits written in a billing currency count (issue
   * 35). Absent: no billing amount, and every billing-currency limit declines the request.
   */
  readonly billing?: { readonly amount: Decimal; readonly currency: string } | undefined;
}

/**
 * What a compiled policy reads. Facts are read straight from here (no facts object is built
 * per call): see `facts.ts` for which field each fact is.
 */
export interface EvaluationInput {
  readonly request: AuthorizationRequest;
  /** Aggregates named by `CompiledPolicy.aggregates`; others may be absent. */
  readonly spend: SpendTotals;
  /** Decision time, epoch milliseconds; `hourUtc` and `dayOfWeekUtc` derive from it. */
  readonly nowMs: number;
}
