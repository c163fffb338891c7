import type { Scope, SettlementRecord } from '../../core/index.js';
import type { SettlementRecordInput } from '../ops/settlements.js';

export { SETTLEMENT_RECORDS_MAX, type SettlementRecordInput } from '../ops/settlements.js';

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
