import type { Scope, TransactionRecord } from '../../core/index.js';
import type {
  Processor,
  ProcessorConnectionRecord,
  ProcessorConnectionSecrets,
  ProcessorSecrets,
} from '../ops/processors.js';

export {
  PROCESSOR_CONNECTIONS_MAX,
  PROCESSORS,
  ROTATION_GRACE_MS_MAX,
  type Processor,
  type ProcessorConnectionRecord,
  type ProcessorConnectionSecrets,
  type ProcessorSecrets,
} from '../ops/processors.js';

/** Processor connections and the lookups their adapters translate with (contract section 17). */
export interface ProcessorOperations {
  /** The secrets are the caller's to answer once; they are kept encrypted. */
  createProcessorConnection(
    scope: Scope,
    input: { readonly processor: Processor; readonly secrets: ProcessorSecrets },
  ): Promise<ProcessorConnectionRecord>;
  getProcessorConnection(scope: Scope, connectionId: string): Promise<ProcessorConnectionRecord>;
  listProcessorConnections(scope: Scope): Promise<ProcessorConnectionRecord[]>;
  deleteProcessorConnection(scope: Scope, connectionId: string): Promise<void>;
  /** New secrets; the current ones keep verifying for `graceMs` (0: not at all). */
  rotateProcessorSecrets(
    scope: Scope,
    connectionId: string,
    input: { readonly secrets: ProcessorSecrets; readonly graceMs: number },
  ): Promise<ProcessorConnectionRecord>;
  /** For an adapter: the connection by id alone (the message's signature authenticates it). */
  processorConnectionSecrets(
    processor: Processor,
    connectionId: string,
  ): Promise<ProcessorConnectionSecrets>;
  /** The spendgate card tied to the processor's card on the connection, or null. */
  cardOfProcessorCard(
    scope: Scope,
    connectionId: string,
    processorCardId: string,
  ): Promise<string | null>;
  /** The card authorization recorded under the network's id, or null. */
  authorizationByNetworkId(
    scope: Scope,
    networkTransactionId: string,
  ): Promise<TransactionRecord | null>;
}
