/**
 * The chain-side steps of an external transfer, each a small function over a web3.js
 * (v1) `Connection`. The worker (src/workers/solana-transfers.ts) owns the loop and persistence:
 *
 *   build + sign (buildSignedTransfer) → persist bytes, signature, lastValidBlockHeight
 *   → broadcast → checkTransfer, repeatedly:
 *       landed  → done;  failed → fail the transfer;
 *       pending → broadcast the same bytes again (the chain applies a signature once);
 *       expired → the bytes can never land: build and sign anew.
 *
 * SOL moves by a system transfer; USDC by `transferChecked` (decimals 6) from the treasury's
 * associated token account to the recipient's, created idempotently in the same transaction
 * (the treasury pays its rent). An optional memo goes through the SPL Memo program (v2,
 * `MemoSq4g…`), which solana-bankrun (and so the local cluster) loads like every cluster does.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
} from '@solana/spl-token';
import {
  type Connection,
  PublicKey,
  type SignatureStatus,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import type { TreasurySigner } from './signer.js';

export type ChainCurrency = 'SOL' | 'USDC';

/** USDC has 6 decimals on every cluster (and on the local one). */
export const USDC_DECIMALS = 6;

/** The SPL Memo program (v2/v3: checks that listed signers signed). */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** Memos are public and cost transaction space; a reference, not a message. */
export const MEMO_BYTES_MAX = 256;

/** `failed` reasons are for logs: bounded. */
export const FAILURE_REASON_LENGTH_MAX = 200;

const U64_MAX = 2n ** 64n - 1n;

/**
 * A transfer that can never be built as asked (amount out of range, recipient unusable, memo
 * too long): retrying it as is cannot help, unlike an RPC error.
 */
export class TransferRefusedError extends Error {
  override readonly name = 'TransferRefusedError';
}

/**
 * Exact decimal string → integer units of 10^-decimals: "12.345678", 6 → 12345678n. Digits,
 * at most one point with digits on both sides, at most `decimals` fraction digits; no sign,
 * exponent, spaces or separators. No floating point anywhere.
 */
export function toUnits(amount: string, decimals: number): bigint {
  if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new RangeError(`decimals must be an integer in 0..255, got ${decimals}`);
  }
  // Bounded before the regex and BigInt, so a huge string costs nothing.
  const match = amount.length <= 100 ? /^(\d+)(?:\.(\d+))?$/.exec(amount) : null;
  if (match === null) {
    throw new RangeError(
      `not a plain non-negative decimal amount: ${JSON.stringify(amount.slice(0, 40))}`,
    );
  }
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    throw new RangeError(
      `amount has ${fraction.length} fraction digits, more than the currency's ${decimals}`,
    );
  }
  return BigInt(whole + fraction.padEnd(decimals, '0'));
}

export interface BuildTransferInput {
  connection: Connection;
  signer: TreasurySigner;
  currency: ChainCurrency;
  usdcMint: PublicKey;
  /** SOL: the receiving account. USDC: the owner (wallet) whose associated account receives. */
  recipient: PublicKey;
  /** Lamports (SOL) or 10^-6 USDC: > 0 and within u64. */
  amountUnits: bigint;
  /** Public, on chain: an opaque reference, never personal data. At most 256 UTF-8 bytes. */
  memo?: string;
}

export interface SignedTransfer {
  /** The signed wire transaction: what to persist and (re)broadcast, byte for byte. */
  transaction: Buffer;
  /** The fee payer's signature (base58): the transaction's id on chain. */
  signature: string;
  /** The last block height at which this transaction's blockhash can still land. */
  lastValidBlockHeight: number;
}

function transferInstructions(input: BuildTransferInput): TransactionInstruction[] {
  const treasury = input.signer.publicKey;
  if (input.currency === 'SOL') {
    return [
      SystemProgram.transfer({
        fromPubkey: treasury,
        toPubkey: input.recipient,
        lamports: input.amountUnits,
      }),
    ];
  }
  // An off-curve owner is usually a mistake (most often a token account's own address, whose
  // associated account nobody controls): refused rather than funding an unreachable account.
  if (!PublicKey.isOnCurve(input.recipient.toBytes())) {
    throw new TransferRefusedError(
      'the USDC recipient is not a wallet address (off-curve: a token account or a program address)',
    );
  }
  const source = getAssociatedTokenAddressSync(input.usdcMint, treasury);
  const destination = getAssociatedTokenAddressSync(input.usdcMint, input.recipient);
  return [
    createAssociatedTokenAccountIdempotentInstruction(
      treasury,
      destination,
      input.recipient,
      input.usdcMint,
    ),
    createTransferCheckedInstruction(
      source,
      input.usdcMint,
      destination,
      treasury,
      input.amountUnits,
      USDC_DECIMALS,
    ),
  ];
}

function memoInstruction(memo: string, signer: PublicKey): TransactionInstruction {
  const data = Buffer.from(memo, 'utf8');
  if (!memo.isWellFormed() || data.length === 0 || data.length > MEMO_BYTES_MAX) {
    throw new TransferRefusedError(`a memo must be 1 to ${MEMO_BYTES_MAX} bytes of valid UTF-8`);
  }
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: [{ pubkey: signer, isSigner: true, isWritable: false }],
    data,
  });
}

/**
 * Builds and signs one transfer from the treasury; sends nothing. The blockhash comes from
 * `getLatestBlockhash('confirmed')`, and its `lastValidBlockHeight` is what `checkTransfer`
 * needs later. Persist all three results before the first broadcast.
 */
export async function buildSignedTransfer(input: BuildTransferInput): Promise<SignedTransfer> {
  const { amountUnits, signer } = input;
  if (typeof amountUnits !== 'bigint' || amountUnits <= 0n || amountUnits > U64_MAX) {
    throw new TransferRefusedError('amountUnits must be a bigint in 1..2^64-1');
  }
  if (input.currency !== 'SOL' && input.currency !== 'USDC') {
    throw new TransferRefusedError('unsupported currency');
  }
  if (input.recipient.equals(signer.publicKey)) {
    throw new TransferRefusedError('the recipient is the treasury itself');
  }
  const instructions = transferInstructions(input);
  if (input.memo !== undefined) instructions.push(memoInstruction(input.memo, signer.publicKey));

  const { blockhash, lastValidBlockHeight } =
    await input.connection.getLatestBlockhash('confirmed');
  const unsigned = new Transaction({ feePayer: signer.publicKey, blockhash, lastValidBlockHeight });
  unsigned.add(...instructions);
  const message = unsigned.serializeMessage();

  const signed = await signer.signTransaction(unsigned);
  // A remote signer must sign exactly what was built, and fully.
  if (!signed.serializeMessage().equals(message)) {
    throw new Error('the signer returned a transaction with a different message');
  }
  const signature = signed.signature;
  if (signature === null) throw new Error('the signer did not sign the transaction');
  // Verifies every signature and the 1,232-byte packet limit.
  const transaction = signed.serialize({ requireAllSignatures: true, verifySignatures: true });
  return { transaction, signature: bs58.encode(signature), lastValidBlockHeight };
}

/**
 * Sends signed bytes once, without preflight (a failing transaction must land with its error,
 * so that checkTransfer can report it) and without RPC-side retries (the caller rebroadcasts).
 * RPC errors are thrown as they are: the caller retries the same bytes.
 */
export async function broadcast(connection: Connection, transaction: Buffer): Promise<void> {
  await connection.sendRawTransaction(transaction, { skipPreflight: true, maxRetries: 0 });
}

/**
 * Records a signed transaction through `record` (the store, before any send), then sends it,
 * only if this signer's recording won: a signer that lost (another recorded first) sends
 * nothing, since the recorded bytes are the ones to send. Out: whether it sent.
 */
export async function recordThenBroadcast(
  connection: Connection,
  built: SignedTransfer,
  record: (send: {
    signedTransaction: string;
    signature: string;
    lastValidBlockHeight: number;
  }) => Promise<boolean>,
): Promise<boolean> {
  const recorded = await record({
    signedTransaction: built.transaction.toString('base64'),
    signature: built.signature,
    lastValidBlockHeight: built.lastValidBlockHeight,
  });
  if (!recorded) return false;
  await broadcast(connection, built.transaction);
  return true;
}

export type TransferState =
  | { state: 'landed' }
  | { state: 'failed'; reason: string }
  | { state: 'pending' }
  | { state: 'expired' };

function failureReason(err: unknown): string {
  let text: string;
  try {
    text = typeof err === 'string' ? err : (JSON.stringify(err) ?? 'unknown error');
  } catch {
    text = 'unknown error';
  }
  return text.length > FAILURE_REASON_LENGTH_MAX
    ? `${text.slice(0, FAILURE_REASON_LENGTH_MAX - 1)}…`
    : text;
}

/** Voted on by a supermajority (or rooted): no longer expected to be rolled back. */
function isConfirmed(status: SignatureStatus): boolean {
  if (status.confirmationStatus === undefined) {
    // Nodes that predate confirmationStatus: null confirmations means rooted.
    return status.confirmations === null;
  }
  return status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
}

async function signatureStatus(
  connection: Connection,
  signature: string,
): Promise<SignatureStatus | null> {
  const { value } = await connection.getSignatureStatuses([signature], {
    searchTransactionHistory: true,
  });
  return value[0] ?? null;
}

/**
 * Where a persisted transfer stands:
 *
 * - `landed`: in a confirmed (or finalized) block, without error.
 * - `failed`: in a confirmed block with an error (it paid its fee and moved nothing); `reason`
 *   is the error, stringified and bounded. An error seen only at `processed` is `pending`: that
 *   block may still be dropped, and the same bytes could then land, and succeed, elsewhere.
 * - `pending`: no confirmed outcome yet, and the blockhash can still land: send the same bytes
 *   again (harmless: a signature is applied at most once).
 * - `expired`: no status, and the confirmed block height is past `lastValidBlockHeight`.
 *
 * Why `expired` is safe to re-sign: a transaction can only be included in a block whose height
 * is at most its blockhash's `lastValidBlockHeight`; every later block rejects it. Once the
 * confirmed chain is past that height, all the blocks that could have included these bytes are
 * already in it, so if the signature is in none of them (no status, searching history) these
 * bytes can never land, however often they are rebroadcast; a new transaction with a new
 * blockhash cannot double the transfer. The status is asked again after the height, so that a
 * transaction that landed in the last valid blocks between the two first answers is not missed.
 *
 * What this relies on: the RPC node keeps statuses at least as long as the blockhash is
 * checked (its status cache covers about 300 slots; with `searchTransactionHistory` a node
 * with transaction history answers for older ones), all three answers come from one
 * consistent node (not a load balancer over nodes at different heights), and a confirmed block
 * is not rolled back (optimistic confirmation; use `finalized` height for the stricter bound).
 */
export async function checkTransfer(
  connection: Connection,
  sent: { signature: string; lastValidBlockHeight: number },
): Promise<TransferState> {
  if (!Number.isSafeInteger(sent.lastValidBlockHeight) || sent.lastValidBlockHeight < 0) {
    throw new RangeError('lastValidBlockHeight must be a non-negative integer');
  }
  const status = await signatureStatus(connection, sent.signature);
  if (status !== null) {
    if (!isConfirmed(status)) return { state: 'pending' };
    return status.err === null
      ? { state: 'landed' }
      : { state: 'failed', reason: failureReason(status.err) };
  }
  const height = await connection.getBlockHeight('confirmed');
  if (height <= sent.lastValidBlockHeight) return { state: 'pending' };
  // Past the last valid height: make sure it did not land in the meantime.
  const again = await signatureStatus(connection, sent.signature);
  if (again === null) return { state: 'expired' };
  if (!isConfirmed(again)) return { state: 'pending' };
  return again.err === null
    ? { state: 'landed' }
    : { state: 'failed', reason: failureReason(again.err) };
}

/**
 * The recipient's balance: lamports (SOL), or units of its associated USDC account (0 when
 * that account does not exist). For tests and reconciliation.
 */
export async function recipientBalance(
  connection: Connection,
  target: { currency: ChainCurrency; usdcMint: PublicKey; recipient: PublicKey },
): Promise<bigint> {
  if (target.currency === 'SOL') {
    return BigInt(await connection.getBalance(target.recipient, 'confirmed'));
  }
  const address = getAssociatedTokenAddressSync(target.usdcMint, target.recipient, true);
  const info = await connection.getAccountInfo(address, 'confirmed');
  if (info === null) return 0n;
  return unpackAccount(address, info).amount;
}
