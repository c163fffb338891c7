/**
 * The chain side of deposits (issue 15): reading the transfers into a deposit address out of a
 * finalized transaction, sending a deposit from an outside wallet (tests and the test-mode
 * CLI), and building a sweep from a deposit address into the treasury. The watcher and the
 * sweeper (src/workers/deposit-watcher.ts, deposit-sweeper.ts) own the loops and persistence.
 */
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  type Connection,
  type Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  type VersionedTransactionResponse,
} from '@solana/web3.js';
import bs58 from 'bs58';
import type { TreasurySigner } from './signer.js';
import {
  TransferRefusedError,
  USDC_DECIMALS,
  type ChainCurrency,
  type SignedTransfer,
} from './transfers.js';

export const SOL_DECIMALS = 9;

/** System program: Transfer is instruction 2 (u32 LE), then u64 lamports. */
const SYSTEM_TRANSFER = 2;
/** SPL Token (and Token-2022): Transfer = 3, TransferChecked = 12, then u64 amount. */
const TOKEN_TRANSFER = 3;
const TOKEN_TRANSFER_CHECKED = 12;

/** One transfer into a deposit address, as found in a transaction. */
export interface DepositTransfer {
  readonly instructionIndex: number;
  /** -1: an outer instruction. */
  readonly innerIndex: number;
  readonly sender: string;
  /** null: SOL. */
  readonly mint: string | null;
  /** SOL, USDC, or null for another mint. */
  readonly currency: ChainCurrency | null;
  /** Exact decimal string in the token's own units ("12.5"). */
  readonly amount: string;
}

/** What the watcher follows for one vault. */
export interface DepositTarget {
  /** The vault's deposit address (a wallet). */
  readonly owner: PublicKey;
  readonly usdcMint: PublicKey;
}

/** Integer units to an exact decimal string: 12500000n, 6 → "12.5". */
export function unitsToDecimal(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = (units / scale).toString();
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

interface RawInstruction {
  readonly programIdIndex: number;
  readonly accounts: readonly number[];
  readonly data: Uint8Array;
}

function u64At(data: Uint8Array, offset: number): bigint | null {
  if (data.length < offset + 8) return null;
  return Buffer.from(data).readBigUInt64LE(offset);
}

/** The associated token account of `owner` for `mint` under a token program. */
export function depositTokenAccount(owner: PublicKey, mint: PublicKey, program = TOKEN_PROGRAM_ID) {
  return getAssociatedTokenAddressSync(mint, owner, false, program, ASSOCIATED_TOKEN_PROGRAM_ID);
}

function systemTransfer(
  instruction: RawInstruction,
  keys: readonly PublicKey[],
  target: DepositTarget,
): Omit<DepositTransfer, 'instructionIndex' | 'innerIndex'> | null {
  const data = Buffer.from(instruction.data);
  if (data.length !== 12 || data.readUInt32LE(0) !== SYSTEM_TRANSFER) return null;
  const to = keys[instruction.accounts[1] ?? -1];
  const from = keys[instruction.accounts[0] ?? -1];
  const lamports = u64At(data, 4);
  if (to === undefined || from === undefined || lamports === null) return null;
  if (!to.equals(target.owner)) return null;
  return {
    sender: from.toBase58(),
    mint: null,
    currency: 'SOL',
    amount: unitsToDecimal(lamports, SOL_DECIMALS),
  };
}

function tokenTransfer(
  instruction: RawInstruction,
  keys: readonly PublicKey[],
  program: PublicKey,
  target: DepositTarget,
): Omit<DepositTransfer, 'instructionIndex' | 'innerIndex'> | null {
  const data = instruction.data;
  const key = (position: number) => keys[instruction.accounts[position] ?? -1];
  const units = u64At(data, 1);
  if (units === null) return null;
  if (data[0] === TOKEN_TRANSFER_CHECKED && data.length === 10) {
    const [mint, destination, authority] = [key(1), key(2), key(3)];
    const decimals = data[9];
    if (mint === undefined || destination === undefined || authority === undefined) return null;
    if (decimals === undefined) return null;
    if (!destination.equals(depositTokenAccount(target.owner, mint, program))) return null;
    const isUsdc = mint.equals(target.usdcMint) && decimals === USDC_DECIMALS;
    return {
      sender: authority.toBase58(),
      mint: mint.toBase58(),
      currency: isUsdc ? 'USDC' : null,
      amount: unitsToDecimal(units, decimals),
    };
  }
  if (data[0] === TOKEN_TRANSFER && data.length === 9) {
    // A plain Transfer names no mint: only the USDC account's is known to be USDC. Another
    // token account of the owner would need a read of its mint (not done: see docs/deposits.md).
    const [destination, authority] = [key(1), key(2)];
    if (destination === undefined || authority === undefined) return null;
    if (!destination.equals(depositTokenAccount(target.owner, target.usdcMint, program))) {
      return null;
    }
    return {
      sender: authority.toBase58(),
      mint: target.usdcMint.toBase58(),
      currency: 'USDC',
      amount: unitsToDecimal(units, USDC_DECIMALS),
    };
  }
  return null;
}

function transferOf(
  instruction: RawInstruction,
  keys: readonly PublicKey[],
  target: DepositTarget,
): Omit<DepositTransfer, 'instructionIndex' | 'innerIndex'> | null {
  const program = keys[instruction.programIdIndex];
  if (program === undefined) return null;
  if (program.equals(SystemProgram.programId)) return systemTransfer(instruction, keys, target);
  if (program.equals(TOKEN_PROGRAM_ID) || program.equals(TOKEN_2022_PROGRAM_ID)) {
    return tokenTransfer(instruction, keys, program, target);
  }
  return null;
}

/**
 * Every transfer into the target's deposit address (SOL to the address; tokens to its
 * associated token accounts) in a landed transaction, outer and inner instructions alike, each
 * with its place. A failed transaction moved nothing: none.
 */
export function depositTransfersIn(
  response: VersionedTransactionResponse,
  target: DepositTarget,
): DepositTransfer[] {
  if (response.meta === null || response.meta.err !== null) return [];
  const message = response.transaction.message;
  const loaded = response.meta.loadedAddresses;
  const keys: PublicKey[] = [
    ...message.staticAccountKeys,
    ...(loaded?.writable ?? []),
    ...(loaded?.readonly ?? []),
  ];
  const found: DepositTransfer[] = [];
  message.compiledInstructions.forEach((instruction, instructionIndex) => {
    const transfer = transferOf(
      {
        programIdIndex: instruction.programIdIndex,
        accounts: instruction.accountKeyIndexes,
        data: instruction.data,
      },
      keys,
      target,
    );
    if (transfer !== null) found.push({ ...transfer, instructionIndex, innerIndex: -1 });
  });
  for (const inner of response.meta.innerInstructions ?? []) {
    inner.instructions.forEach((instruction, innerIndex) => {
      const transfer = transferOf(
        {
          programIdIndex: instruction.programIdIndex,
          accounts: instruction.accounts,
          data: bs58.decode(instruction.data),
        },
        keys,
        target,
      );
      if (transfer !== null) found.push({ ...transfer, instructionIndex: inner.index, innerIndex });
    });
  }
  return found;
}

export interface OutsideSend {
  readonly connection: Connection;
  /** The outside wallet: signs and pays the fee (and the associated account's rent). */
  readonly from: Keypair;
  readonly to: PublicKey;
  /** null: SOL. Otherwise the token's mint (USDC's, or any other). */
  readonly mint: PublicKey | null;
  readonly decimals: number;
  readonly amountUnits: bigint;
}

/**
 * Sends SOL or a token from an outside wallet to an address, as a user's wallet would: a
 * token goes to the address's associated account, created in the same transaction when needed.
 * Resolves to the signature once the transaction is confirmed.
 */
export async function sendFromOutside(send: OutsideSend): Promise<string> {
  if (send.amountUnits <= 0n) throw new TransferRefusedError('the amount must be positive');
  const transaction = new Transaction();
  if (send.mint === null) {
    transaction.add(
      SystemProgram.transfer({
        fromPubkey: send.from.publicKey,
        toPubkey: send.to,
        lamports: send.amountUnits,
      }),
    );
  } else {
    const source = depositTokenAccount(send.from.publicKey, send.mint);
    const destination = depositTokenAccount(send.to, send.mint);
    transaction.add(
      createAssociatedTokenAccountIdempotentInstruction(
        send.from.publicKey,
        destination,
        send.to,
        send.mint,
      ),
      createTransferCheckedInstruction(
        source,
        send.mint,
        destination,
        send.from.publicKey,
        send.amountUnits,
        send.decimals,
      ),
    );
  }
  const latest = await send.connection.getLatestBlockhash('confirmed');
  transaction.feePayer = send.from.publicKey;
  transaction.recentBlockhash = latest.blockhash;
  transaction.sign(send.from);
  const signature = await send.connection.sendRawTransaction(transaction.serialize());
  const confirmed = await send.connection.confirmTransaction({ signature, ...latest }, 'confirmed');
  if (confirmed.value.err !== null) {
    throw new Error(`the deposit failed on chain: ${JSON.stringify(confirmed.value.err)}`);
  }
  return signature;
}

export interface BuildSweepInput {
  readonly connection: Connection;
  /** The treasury: fee payer, and the receiver. */
  readonly treasury: TreasurySigner;
  /** The deposit address's keypair: signs as the owner of what moves. */
  readonly depositKey: Keypair;
  readonly currency: ChainCurrency;
  readonly usdcMint: PublicKey;
  readonly amountUnits: bigint;
}

/**
 * Builds and signs a sweep of one deposit: SOL by a system transfer from the deposit address,
 * USDC by transferChecked from its associated account to the treasury's; the treasury pays
 * the fee, so a deposit address needs no SOL of its own (a SOL sweep moves exactly the
 * deposit, and the address keeps whatever else it holds). Sends nothing: record, then send.
 */
export async function buildSignedSweep(input: BuildSweepInput): Promise<SignedTransfer> {
  const owner = input.depositKey.publicKey;
  const treasury = input.treasury.publicKey;
  if (input.amountUnits <= 0n) throw new TransferRefusedError('a sweep moves a positive amount');
  const instruction =
    input.currency === 'SOL'
      ? SystemProgram.transfer({
          fromPubkey: owner,
          toPubkey: treasury,
          lamports: input.amountUnits,
        })
      : createTransferCheckedInstruction(
          depositTokenAccount(owner, input.usdcMint),
          input.usdcMint,
          depositTokenAccount(treasury, input.usdcMint),
          owner,
          input.amountUnits,
          USDC_DECIMALS,
        );
  const { blockhash, lastValidBlockHeight } =
    await input.connection.getLatestBlockhash('confirmed');
  const unsigned = new Transaction({ feePayer: treasury, blockhash, lastValidBlockHeight });
  unsigned.add(instruction);
  unsigned.partialSign(input.depositKey);
  const signed = await input.treasury.signTransaction(unsigned);
  const signature = signed.signature;
  if (signature === null) throw new Error('the treasury did not sign the sweep');
  const transaction = signed.serialize({ requireAllSignatures: true, verifySignatures: true });
  return { transaction, signature: bs58.encode(signature), lastValidBlockHeight };
}

/** PublicKey from base58, or null when it is not one. */
export function publicKeyOrNull(text: string): PublicKey | null {
  try {
    return new PublicKey(text);
  } catch {
    return null;
  }
}
