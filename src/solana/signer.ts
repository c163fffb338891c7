/**
 * The treasury's signer for external transfers.
 *
 * The transfer code never touches a secret key: it hands a fully built transaction (fee payer,
 * blockhash, instructions) to a `TreasurySigner` and gets it back signed. That interface is the
 * seam where a KMS, an HSM or an MPC service can replace the in-process keypair without any
 * change to how transfers are built, recorded, sent or checked: such a signer signs
 * `transaction.serializeMessage()` remotely and attaches the result with
 * `transaction.addSignature(publicKey, signature)`.
 *
 * The in-process signer loads its key from configuration (SOLANA_TREASURY_KEY): a Solana CLI
 * keypair file (a JSON array of 64 numbers) or a base58-encoded 64-byte secret key. Nothing here
 * logs, and no error message, cause or stack carries the setting or any part of it (a setting
 * that is not a valid key may still be a mistyped secret). For logs, use `describeSigner`.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { Keypair, type PublicKey, type Transaction } from '@solana/web3.js';
import bs58 from 'bs58';

export interface TreasurySigner {
  /** The treasury: fee payer and source of every transfer. */
  readonly publicKey: PublicKey;
  /**
   * Adds the treasury's signature to `transaction` (whose message must not change) and resolves
   * to it. May be remote and slow; must not send anything.
   */
  signTransaction(transaction: Transaction): Promise<Transaction>;
}

/** A keypair file is 64 numbers of at most 3 digits: well under 1 KiB. */
export const KEYPAIR_FILE_BYTES_MAX = 10 * 1024;

const SECRET_KEY_BYTES = 64;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** An in-process signer over a keypair; the key stays in the closure (not a property). */
export function keypairSigner(keypair: Keypair): TreasurySigner {
  const publicKey = keypair.publicKey;
  return Object.freeze({
    publicKey,
    signTransaction(transaction: Transaction): Promise<Transaction> {
      // partialSign keeps signatures other parties may already have added.
      transaction.partialSign(keypair);
      return Promise.resolve(transaction);
    },
  });
}

/** What may be logged about a signer: its public key (base58), nothing else. */
export function describeSigner(signer: TreasurySigner): string {
  return signer.publicKey.toBase58();
}

/** Errors about the setting: fixed messages, no cause (a cause could quote the input). */
function refused(reason: string): Error {
  return new Error(`SOLANA_TREASURY_KEY: ${reason}`);
}

function fromSecretKey(secretKey: Uint8Array): Keypair {
  if (secretKey.length !== SECRET_KEY_BYTES) {
    throw refused(`a secret key must be ${SECRET_KEY_BYTES} bytes, got ${secretKey.length}`);
  }
  try {
    return Keypair.fromSecretKey(secretKey);
  } catch {
    throw refused('the secret key is not a valid ed25519 keypair (its public half does not match)');
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function fromBase58(setting: string): Keypair {
  let decoded: Uint8Array;
  try {
    decoded = bs58.decode(setting);
  } catch {
    throw refused('not valid base58');
  }
  if (decoded.length !== SECRET_KEY_BYTES) {
    throw refused(
      `names no file, and as base58 decodes to ${decoded.length} bytes, not a ${SECRET_KEY_BYTES}-byte secret key`,
    );
  }
  return fromSecretKey(decoded);
}

/** The file's text, or null when it holds more than the bound (even if it grew after stat). */
function readBounded(path: string): string | null {
  const buffer = Buffer.alloc(KEYPAIR_FILE_BYTES_MAX + 1);
  const fd = openSync(path, 'r');
  let length = 0;
  try {
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
  } finally {
    closeSync(fd);
  }
  const text = length > KEYPAIR_FILE_BYTES_MAX ? null : buffer.toString('utf8', 0, length);
  buffer.fill(0);
  return text;
}

function fromKeypairFile(path: string): Keypair {
  let size: number;
  let regular: boolean;
  try {
    const stats = statSync(path);
    size = stats.size;
    regular = stats.isFile();
  } catch (error) {
    // Node's fs messages quote the path: keep only the code.
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw refused(
      `neither a readable keypair file (${code}) nor a base58-encoded ${SECRET_KEY_BYTES}-byte secret key`,
    );
  }
  if (!regular) throw refused('the keypair path is not a regular file');
  if (size > KEYPAIR_FILE_BYTES_MAX) {
    throw refused(`the keypair file is larger than ${KEYPAIR_FILE_BYTES_MAX} bytes`);
  }
  let text: string | null;
  try {
    text = readBounded(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw refused(`the keypair file cannot be read (${code})`);
  }
  if (text === null) {
    throw refused(`the keypair file is larger than ${KEYPAIR_FILE_BYTES_MAX} bytes`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse messages quote the input: never pass them on.
    throw refused('the keypair file is not JSON (expected an array of 64 numbers)');
  }
  if (
    !Array.isArray(parsed) ||
    !parsed.every(
      (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 255,
    )
  ) {
    throw refused('the keypair file must hold an array of byte values (0-255)');
  }
  return fromSecretKey(Uint8Array.from(parsed as number[]));
}

/**
 * The treasury signer from its setting: a path to a Solana CLI keypair file, or a base58 secret
 * key. A setting made only of base58 characters that names no file is taken as a secret key;
 * anything else as a path. Throws an Error whose message never contains the setting.
 */
export function loadTreasurySigner(setting: string): TreasurySigner {
  const value = setting.trim();
  if (value === '') throw refused('empty');
  const keypair = BASE58.test(value) && !isFile(value) ? fromBase58(value) : fromKeypairFile(value);
  return keypairSigner(keypair);
}
