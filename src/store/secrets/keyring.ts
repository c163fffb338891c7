import { assert } from '../../core/assert.js';
import {
  DecryptionError,
  decryptText,
  encryptText,
  generateDataKey,
  KEY_BYTES,
  unwrapDataKey,
  wrapDataKey,
} from './envelope.js';

const REDACTED = 'Keyring [redacted]';

/** Old and next master keys a process reads beside its current one, at most. */
export const DECRYPT_ONLY_KEYS_MAX = 4;

/** The master keys of a process: `current` wraps and encrypts; all of them decrypt. */
export interface MasterKeys {
  readonly current: Buffer;
  readonly decryptOnly: readonly Buffer[];
}

interface CachedKey {
  /** The wrapped form this key was unwrapped from, to notice a vault row that changed. */
  readonly wrapped: string;
  readonly dataKey: Buffer;
}

/**
 * The master keys and the vaults' data keys. Everything the master key protects goes through
 * here: the vaults' wrapped data keys, and the secrets that belong to no vault (webhook
 * signing secrets, two-factor secrets).
 *
 * There is one current master key, which wraps and encrypts, and up to
 * `DECRYPT_ONLY_KEYS_MAX` decrypt-only keys, which only unwrap and decrypt: while a master
 * key is rotated (`spendgate keys rotate-master`), rows wrapped under the old key and rows
 * wrapped under the new one exist side by side, and every process must read both. A
 * ciphertext does not name its key; the current key is tried first, then each decrypt-only
 * key, and a wrong key fails GCM's authentication, so a key is never mistaken for another.
 *
 * Data keys are unwrapped once and kept in memory for the hot path: unwrapping costs a GCM
 * decryption per use otherwise. Least recently used keys are evicted first, and an evicted
 * key is simply unwrapped again from the wrapped form the caller passes in from the vault row.
 * No key leaves this class: not through a method, an error, `util.inspect` or `JSON.stringify`.
 */
export class Keyring {
  readonly #masterKey: Buffer;
  readonly #decryptOnly: readonly Buffer[];
  readonly #keys = new Map<string, CachedKey>();
  readonly entriesMax: number;

  /** `masterKeys`: the current key alone, or with decrypt-only keys. */
  constructor(masterKeys: Buffer | MasterKeys, entriesMax = 10_000) {
    const { current, decryptOnly } = Buffer.isBuffer(masterKeys)
      ? { current: masterKeys, decryptOnly: [] }
      : masterKeys;
    assert(current.length === KEY_BYTES, 'the master key is 32 bytes');
    assert(
      decryptOnly.every((key) => key.length === KEY_BYTES),
      'every decrypt-only master key is 32 bytes',
    );
    assert(decryptOnly.length <= DECRYPT_ONLY_KEYS_MAX, 'at most 4 decrypt-only master keys');
    assert(Number.isSafeInteger(entriesMax) && entriesMax > 0, 'entriesMax is a positive integer');
    // Copies of its own, so that a caller who wipes or reuses its buffers cannot change a key.
    this.#masterKey = copyKey(current);
    // The current key is tried first anyway: listed again, it would only cost a second try.
    this.#decryptOnly = decryptOnly.filter((key) => !key.equals(current)).map(copyKey);
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

  /** Encrypts a secret that belongs to no vault under the current master key. */
  encryptSecret(plaintext: string, aad: string): string {
    return encryptText(this.#masterKey, plaintext, aad);
  }

  /** Decrypts a secret of `encryptSecret` under any master key; else `DecryptionError`. */
  decryptSecret(token: string, aad: string): string {
    return this.#underAnyKey((key) => decryptText(key, token, aad)).value;
  }

  /**
   * The vault's wrapped data key wrapped anew under the current master key, or null when it
   * already is. The data key itself stays the same, so what it encrypted needs no change.
   * Throws `DecryptionError` when no master key of this keyring unwraps it.
   */
  rewrapVaultKey(vaultId: string, wrapped: string): string | null {
    const { value: dataKey, current } = this.#underAnyKey((key) =>
      unwrapDataKey(key, wrapped, vaultId),
    );
    try {
      return current ? null : wrapDataKey(this.#masterKey, dataKey, vaultId);
    } finally {
      dataKey.fill(0);
    }
  }

  /** As `rewrapVaultKey`, for a secret of `encryptSecret`. */
  rewrapSecret(token: string, aad: string): string | null {
    const { value, current } = this.#underAnyKey((key) => decryptText(key, token, aad));
    return current ? null : encryptText(this.#masterKey, value, aad);
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
    const dataKey = this.#underAnyKey((key) => unwrapDataKey(key, wrapped, vaultId)).value;
    this.#remember(vaultId, { wrapped, dataKey });
    return dataKey;
  }

  /** `open` under the current key, else under each decrypt-only key in turn. */
  #underAnyKey<T>(open: (key: Buffer) => T): { value: T; current: boolean } {
    try {
      return { value: open(this.#masterKey), current: true };
    } catch (error) {
      if (!(error instanceof DecryptionError)) throw error;
    }
    for (const key of this.#decryptOnly) {
      try {
        return { value: open(key), current: false };
      } catch (error) {
        if (!(error instanceof DecryptionError)) throw error;
      }
    }
    throw new DecryptionError();
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

function copyKey(key: Buffer): Buffer {
  const copy = Buffer.alloc(key.length);
  key.copy(copy);
  return copy;
}
