import type {
  AmountInput,
  Metadata,
  Scope,
  TransferRecord,
  TransferStatus,
} from '../../core/index.js';
import type { Page, PageQuery } from './pages.js';

export interface ListTransfersQuery extends PageQuery {
  /** Transfers from or to this vault (of those the scope's account made). */
  readonly vaultId?: string | undefined;
  readonly status?: TransferStatus | undefined;
}

export interface PendingChainTransfer {
  readonly transferId: string;
  readonly mode: Scope['mode'];
  readonly currency: string;
  /** A decimal string, exact (NUMERIC in the database). */
  readonly amount: string;
  readonly address: string;
  readonly memo: string | null;
  /** The recorded send, if the transfer was signed before (by this or an earlier process). */
  readonly send: ChainSend | null;
}

export interface ChainSend {
  readonly signedTransaction: string;
  readonly signature: string;
  readonly lastValidBlockHeight: number;
  readonly signings: number;
}

export interface ExternalTransferInput {
  readonly fromVaultId: string;
  /** A valid Solana address, checked at the edge. */
  readonly address: string;
  /** Read against the source vault's currency (more than 0). */
  readonly amount: AmountInput;
  readonly memo: string | null;
  readonly metadata?: Metadata | null;
}

export interface InternalTransferInput {
  readonly fromVaultId: string;
  readonly toVaultId: string;
  /** Read against the source vault's currency (more than 0). */
  readonly amount: AmountInput;
  readonly description: string | null;
  readonly metadata?: Metadata | null;
}

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
