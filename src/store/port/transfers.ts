import type { Scope, TransferRecord } from '../../core/index.js';
import type { ChainSend, PendingChainTransfer } from '../ops/chain-sends.js';
import type { ExternalTransferInput } from '../ops/external-transfers.js';
import type { ListTransfersQuery, Page } from '../ops/lists.js';
import type { InternalTransferInput } from '../ops/transfers.js';

export type { ChainSend, PendingChainTransfer } from '../ops/chain-sends.js';
export type { ExternalTransferInput } from '../ops/external-transfers.js';
export type { InternalTransferInput } from '../ops/transfers.js';

/** Transfers between vaults and out to Solana (contract section 12), and their chain sends. */
export interface TransferOperations {
  createInternalTransfer(scope: Scope, input: InternalTransferInput): Promise<TransferRecord>;
  createExternalTransfer(scope: Scope, input: ExternalTransferInput): Promise<TransferRecord>;
  getTransfer(scope: Scope, transferId: string): Promise<TransferRecord>;
  listTransfers(scope: Scope, query: ListTransfersQuery): Promise<Page<TransferRecord>>;
  /** The transfer worker's side: what to send, what was sent, and how it ended. */
  /** `holdBack`: `mode:currency` keys whose unsigned transfers wait (short of reserves). */
  pendingChainTransfers(
    batchMax: number,
    holdBack?: readonly string[],
  ): Promise<PendingChainTransfer[]>;
  recordChainSend(
    transferId: string,
    send: Omit<ChainSend, 'signings'>,
    previousSignature: string | null,
  ): Promise<boolean>;
  completeExternalTransfer(transferId: string, signature: string): Promise<TransferRecord>;
  failExternalTransfer(transferId: string, reason: string): Promise<TransferRecord>;
}
