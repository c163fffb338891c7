/**
 * A Solana runtime in-process (solana-bankrun) made to behave like a cluster seen through RPC:
 *
 * - bankrun does not advance slots by itself: every landed transaction moves the chain one
 *   slot (and one block) on, and `advanceSlots(n)` moves it n blocks, so that block heights move
 *   and blockhashes expire (bankrun keeps a blockhash valid for 300 blocks; the
 *   `lastValidBlockHeight` it reports says exactly when).
 * - bankrun does not verify transaction signatures: this layer does (ed25519, node:crypto), as
 *   a validator's sigverify stage would, so a badly signed transaction never lands.
 * - Signatures are deduplicated: the same signed bytes sent again are not applied twice.
 * - Statuses of landed transactions (success, or the error as `err`) are kept for
 *   `getSignatureStatuses`, bounded (least recently used out).
 *
 * Every state change runs one at a time (`serialize`), so a slot warp never interleaves with a
 * transaction being processed.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { PublicKey, type VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { BanksTransactionResultWithMeta, ProgramTestContext } from 'solana-bankrun';
import { TransactionHistory } from './history.js';
import { toTransactionError, type TransactionErrorJson } from './transaction-error.js';

/** At most this many signature statuses are remembered (least recently used out). */
export const RECORDED_SIGNATURES_MAX = 10_000;
/** At most this many blocks per `advanceSlots` call (a warp costs about a millisecond). */
export const ADVANCE_SLOTS_MAX = 10_000;

export interface SignatureStatus {
  slot: number;
  err: TransactionErrorJson | null;
}

export interface SimulationOutcome {
  err: TransactionErrorJson | null;
  /** bankrun's text of the error ("Blockhash not found"), null on success. */
  message: string | null;
  logs: string[];
  unitsConsumed: number;
  returnData: { programId: string; dataBase64: string } | null;
}

export type SendOutcome =
  | { kind: 'landed'; signature: string; status: SignatureStatus }
  | { kind: 'duplicate'; signature: string; status: SignatureStatus }
  /** Not landed (bad signature, unknown blockhash, fee payer cannot pay): dropped, as on a cluster. */
  | { kind: 'dropped'; signature: string; err: TransactionErrorJson };

export interface LocalChainEvents {
  landed: [signature: string, status: SignatureStatus];
  slot: [slot: number];
}

/** bigint from bankrun to an exact JSON number. */
export function exactNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`${what} out of the exact range of a number: ${value}`);
  }
  return Number(value);
}

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function ed25519Key(publicKey: PublicKey): KeyObject {
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey.toBuffer()]),
    format: 'der',
    type: 'spki',
  });
}

/** Whether every required signature is present and valid over the message bytes. */
export function verifySignatures(tx: VersionedTransaction): boolean {
  const required = tx.message.header.numRequiredSignatures;
  if (required < 1 || tx.signatures.length !== required) return false;
  const message = tx.message.serialize();
  const keys = tx.message.staticAccountKeys;
  for (let i = 0; i < required; i += 1) {
    const key = keys[i];
    const signature = tx.signatures[i];
    if (key === undefined || signature === undefined) return false;
    if (!verify(null, message, ed25519Key(key), signature)) return false;
  }
  return true;
}

export function signatureOf(tx: VersionedTransaction): string {
  const first = tx.signatures[0];
  if (first === undefined) throw new Error('transaction has no signature');
  return bs58.encode(first);
}

export class LocalChain extends EventEmitter<LocalChainEvents> {
  readonly #context: ProgramTestContext;
  readonly #statuses = new Map<string, SignatureStatus>();
  /** Landed transactions, for getSignaturesForAddress and getTransaction. */
  readonly history = new TransactionHistory();
  #queue: Promise<unknown> = Promise.resolve();
  #transactionCount = 0;

  constructor(context: ProgramTestContext) {
    super();
    this.#context = context;
  }

  get context(): ProgramTestContext {
    return this.#context;
  }

  get banks() {
    return this.#context.banksClient;
  }

  /** Landed transactions (and airdrops) since start. */
  get transactionCount(): number {
    return this.#transactionCount;
  }

  /** Runs state changes one at a time, in call order. */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async slot(): Promise<number> {
    return exactNumber(await this.banks.getSlot(), 'slot');
  }

  async blockHeight(): Promise<number> {
    return exactNumber(await this.banks.getBlockHeight(), 'block height');
  }

  /** Moves the chain `blocks` blocks on (one slot each); each block registers a new blockhash. */
  advanceSlots(blocks: number): Promise<number> {
    if (!Number.isSafeInteger(blocks) || blocks < 0 || blocks > ADVANCE_SLOTS_MAX) {
      throw new RangeError(`blocks must be an integer in [0, ${ADVANCE_SLOTS_MAX}], got ${blocks}`);
    }
    return this.serialize(() => this.#advance(blocks));
  }

  async #advance(blocks: number): Promise<number> {
    let slot = await this.banks.getSlot();
    for (let i = 0; i < blocks; i += 1) {
      slot += 1n;
      this.#context.warpToSlot(slot);
    }
    const now = exactNumber(slot, 'slot');
    if (blocks > 0) this.emit('slot', now);
    return now;
  }

  /** The status of a signature: remembered here, else bankrun's status cache. */
  async status(signature: string): Promise<SignatureStatus | null> {
    const known = this.#statuses.get(signature);
    if (known !== undefined) {
      this.#statuses.delete(signature);
      this.#statuses.set(signature, known);
      return known;
    }
    const found = await this.banks.getTransactionStatus(signature);
    if (found === null) return null;
    return {
      slot: exactNumber(found.slot, 'slot'),
      err: found.err === null ? null : toTransactionError(found.err),
    };
  }

  #record(signature: string, status: SignatureStatus): void {
    this.#statuses.delete(signature);
    this.#statuses.set(signature, status);
    while (this.#statuses.size > RECORDED_SIGNATURES_MAX) {
      const oldest = this.#statuses.keys().next();
      if (oldest.done === true) break;
      this.#statuses.delete(oldest.value);
    }
  }

  async simulate(tx: VersionedTransaction): Promise<SimulationOutcome> {
    return outcomeOf(await this.banks.simulateTransaction(tx));
  }

  /** Preflight: a simulation, or null when the signature has landed already (a resend). */
  async simulateUnlessKnown(tx: VersionedTransaction): Promise<SimulationOutcome | null> {
    if (this.#statuses.has(signatureOf(tx))) return null;
    return this.simulate(tx);
  }

  /**
   * Processes a signed transaction the way a leader would: verify signatures, dedupe by
   * signature, execute; a transaction that executed (even with an error: it paid its fee)
   * has landed, gets a status and moves the chain one block on.
   */
  send(tx: VersionedTransaction): Promise<SendOutcome> {
    return this.serialize(async () => {
      const signature = signatureOf(tx);
      const known = this.#statuses.get(signature);
      if (known !== undefined) return { kind: 'duplicate', signature, status: known };
      if (!verifySignatures(tx)) {
        return { kind: 'dropped', signature, err: 'SignatureFailure' };
      }
      const slot = await this.slot();
      const keys = tx.message.staticAccountKeys;
      const preBalances = await this.#balances(keys);
      const fee = await this.#fee(tx);
      let result: BanksTransactionResultWithMeta;
      try {
        result = await this.banks.tryProcessTransaction(tx);
      } catch (error) {
        // bankrun throws for a transaction it cannot even sanitize: it is dropped.
        const text = error instanceof Error ? error.message : String(error);
        return { kind: 'dropped', signature, err: toTransactionError(text) };
      }
      const landed = await this.banks.getTransactionStatus(signature);
      if (landed === null) {
        const err = result.result === null ? 'AccountNotFound' : toTransactionError(result.result);
        return { kind: 'dropped', signature, err };
      }
      const status: SignatureStatus = {
        slot,
        err: result.result === null ? null : toTransactionError(result.result),
      };
      this.#record(signature, status);
      this.history.record({
        signature,
        slot,
        blockTime: Math.floor(Date.now() / 1000),
        bytes: Buffer.from(tx.serialize()),
        accountKeys: keys.map((key) => key.toBase58()),
        err: status.err,
        fee,
        preBalances,
        postBalances: await this.#balances(keys),
        logMessages: result.meta?.logMessages ?? [],
      });
      this.#transactionCount += 1;
      this.emit('landed', signature, status);
      await this.#advance(1);
      return { kind: 'landed', signature, status };
    });
  }

  /** Lamports of each account, 0 for one that does not exist, as a node's pre/postBalances. */
  async #balances(keys: readonly PublicKey[]): Promise<number[]> {
    const balances: number[] = [];
    for (const key of keys)
      balances.push(exactNumber(await this.banks.getBalance(key), 'lamports'));
    return balances;
  }

  /** The fee the transaction pays (bankrun's fee for its message; 0 if it cannot price it). */
  async #fee(tx: VersionedTransaction): Promise<number> {
    const banks = this.banks;
    const fee = await banks.getFeeForMessage(
      tx.message as Parameters<typeof banks.getFeeForMessage>[0],
    );
    return fee === null ? 0 : exactNumber(fee, 'lamports');
  }

  /**
   * Credits lamports directly (test convenience, like a faucet) and returns a made-up
   * signature that reports as finalized.
   */
  airdrop(to: PublicKey, lamports: number): Promise<string> {
    return this.serialize(async () => {
      const current = await this.banks.getAccount(to);
      const total = (current?.lamports ?? 0) + lamports;
      if (!Number.isSafeInteger(total)) throw new RangeError('balance would overflow');
      this.#context.setAccount(to, {
        lamports: total,
        data: current?.data ?? new Uint8Array(0),
        owner: current?.owner ?? new PublicKey(0),
        executable: current?.executable ?? false,
      });
      const signature = bs58.encode(randomBytes(64));
      const status: SignatureStatus = { slot: await this.slot(), err: null };
      this.#record(signature, status);
      this.#transactionCount += 1;
      this.emit('landed', signature, status);
      await this.#advance(1);
      return signature;
    });
  }
}

function outcomeOf(result: BanksTransactionResultWithMeta): SimulationOutcome {
  const meta = result.meta;
  const returnData = meta?.returnData ?? null;
  return {
    err: result.result === null ? null : toTransactionError(result.result),
    message: result.result,
    logs: meta?.logMessages ?? [],
    unitsConsumed: meta === null ? 0 : exactNumber(meta.computeUnitsConsumed, 'compute units'),
    returnData:
      returnData === null
        ? null
        : {
            programId: returnData.programId.toBase58(),
            dataBase64: Buffer.from(returnData.data).toString('base64'),
          },
  };
}
