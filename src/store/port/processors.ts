import type { Scope, TransactionRecord } from '../../core/index.js';

export const PROCESSORS = ['stripe', 'lithic', 'marqeta'] as const;

export type Processor = (typeof PROCESSORS)[number];

/** Connections per account and mode: a program has a handful, one per processor and program. */
export const PROCESSOR_CONNECTIONS_MAX = 100;

/** The longest grace a rotation may give the previous secrets: 7 days. */
export const ROTATION_GRACE_MS_MAX = 7 * 24 * 3600 * 1000;

/** A processor's secrets by name (`signingSecret`, ...); never logged, never in an event. */
export type ProcessorSecrets = Readonly<Record<string, string>>;

export interface ProcessorConnectionRecord {
  readonly id: string;
  readonly accountId: string;
  readonly mode: Scope['mode'];
  readonly processor: Processor;
  readonly createdAtMs: number;
  readonly rotatedAtMs: number | null;
  /** While a rotation's grace lasts, the previous secrets verify too; null otherwise. */
  readonly previousSecretsUntilMs: number | null;
}

/** A connection as its adapter needs it: the scope it acts for and the secrets that verify. */
export interface ProcessorConnectionSecrets {
  readonly connection: ProcessorConnectionRecord;
  /** The current secrets first, then the previous ones while the grace lasts. */
  readonly secrets: readonly ProcessorSecrets[];
  /** The store's time of the read: what a cache measures the grace left from. */
  readonly readAtMs: number;
}

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
