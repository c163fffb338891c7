import type { Scope, SettlementRecord } from '../../core/index.js';
import type { RefundInput } from './authorizations.js';

export const SETTLEMENT_RECORDS_MAX = 10_000;

export type SettlementRecordInput =
  | {
      readonly kind: 'capture';
      readonly authorizationId: string;
      /** A decimal string (form checked at the edge); null captures the whole remaining hold. */
      readonly amount: string | null;
      readonly final: boolean;
    }
  | { readonly kind: 'force_capture' | 'refund'; readonly message: ClearingMessage };

/** A force capture or refund as the batch carries it: amounts as decimal strings, as sent. */
export type ClearingMessage = Omit<RefundInput, 'amount'> & { readonly amount: string };

/** Clearing batches (contract section 7): accepted whole, posted record by record. */
export interface SettlementOperations {
  createSettlement(
    scope: Scope,
    records: readonly SettlementRecordInput[],
  ): Promise<SettlementRecord>;
  getSettlement(scope: Scope, settlementId: string): Promise<SettlementRecord>;
  /** The settlement worker's side: the records still to post, and posting one. */
  pendingSettlementRecords(batchMax: number): Promise<{ settlementId: string; position: number }[]>;
  settleRecord(settlementId: string, position: number): Promise<'captured' | 'failed' | 'skipped'>;
}
