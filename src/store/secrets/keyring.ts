import { assert } from '../../core/assert.js';
import {
  decryptText,
  encryptText,
  generateDataKey,
  KEY_BYTES,
  unwrapDataKey,
  wrapDataKey,
} from './envelope.js';

/**
 * The vaults' data keys, unwrapped once and kept in memory for the hot path: unwrapping costs a
 * GCM decryption per use otherwise. Least recently used keys are evicted first, and an evicted
 * key is simply unwrapped again from the wrapped form the caller passes in from the vault row.
 * No key leaves this class: not through a method, an error, `util.inspect` or `JSON.stringify`.
 */
const REDACTED = 'Keyring [redacted]';

interface CachedKey {
  /** The wrapped form this key was unwrapped from, to notice a vault row that changed. */
  readonly wrapped: string;
  readonly dataKey: Buffer;
}

export class Keyring {
  readonly #masterKey: Buffer;
  readonly #keys = new Map<string, CachedKey>();
  readonly entriesMax: number;

  constructor(masterKey: Buffer, entriesMax = 10_000) {
    assert(masterKey.length === KEY_BYTES, 'the master key is 32 bytes');
    assert(Number.isSafeInteger(entriesMax) && entriesMax > 0, 'entriesMax is a positive integer');
    // A copy of its own, so that a caller who wipes or reuses its buffer cannot change the key.
    this.#masterKey = Buffer.alloc(masterKey.length);
    masterKey.copy(this.#masterKey);
    this.entriesMax = entriesMax;
  }

  get size(): number {
    return this.#keys.size;
  }

  /** Whether a vault's key is cached; does not count as a use. */
  has(vaultId: string): boolean {
    return this.#keys.has(vaultId);
  }

  /** Generates a vault's data key and returns its wrapped form, to store in the vault row. */
  newVaultKey(vaultId: string): { wrapped: string } {
    const dataKey = generateDataKey();
    const wrapped = wrapDataKey(this.#masterKey, dataKey, vaultId);
    this.#remember(vaultId, { wrapped, dataKey });
    return { wrapped };
  }

  encrypt(vaultId: string, wrapped: string, plaintext: string, aad: string): string {
    return encryptText(this.#dataKey(vaultId, wrapped), plaintext, aad);
  }

  /** Throws `DecryptionError` if the token or the wrapped key does not authenticate. */
  decrypt(vaultId: string, wrapped: string, token: string, aad: string): string {
    return decryptText(this.#dataKey(vaultId, wrapped), token, aad);
  }

  /** Drops a vault's key from memory (when the vault closes or its key is replaced). */
  forget(vaultId: string): void {
    const entry = this.#keys.get(vaultId);
    if (entry === undefined) return;
    this.#keys.delete(vaultId);
    entry.dataKey.fill(0);
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return REDACTED;
  }

  #dataKey(vaultId: string, wrapped: string): Buffer {
    const hit = this.#keys.get(vaultId);
    // The wrapped form must match too: a key cached by vault id alone would outlive a changed row.
    if (hit?.wrapped === wrapped) {
      this.#keys.delete(vaultId);
      this.#keys.set(vaultId, hit);
      return hit.dataKey;
    }
    const dataKey = unwrapDataKey(this.#masterKey, wrapped, vaultId);
    this.#remember(vaultId, { wrapped, dataKey });
    return dataKey;
  }

  #remember(vaultId: string, entry: CachedKey): void {
    this.forget(vaultId);
    this.#keys.set(vaultId, entry);
    if (this.#keys.size > this.entriesMax) {
      const oldest = this.#keys.keys().next();
      if (oldest.done !== true) this.forget(oldest.value);
    }
    assert(this.#keys.size <= this.entriesMax, 'the keyring stays within its bound');
  }
}
