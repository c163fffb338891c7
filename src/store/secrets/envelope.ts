import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { assert } from '../../core/assert.js';

/*
 * Envelope encryption with AES-256-GCM: secrets are encrypted under a data key per vault, and
 * each data key is stored wrapped by the master key. A ciphertext is the text
 * `v1.<iv>.<tag>.<ciphertext>` (base64url parts), so it fits a text column and a later format
 * can be told apart by its prefix. The additional authenticated data (AAD) names the place a
 * ciphertext belongs to (`card:<cardId>:number`, `vault-key:<vaultId>`), so a ciphertext copied
 * to another row or field fails to decrypt instead of revealing a secret in the wrong place.
 */

export const KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const ENVELOPE_VERSION = 'v1';

const CIPHER = 'aes-256-gcm';
const BASE64URL = /^[A-Za-z0-9_-]*$/;
// A lone UTF-16 surrogate has no UTF-8 encoding and would come back as U+FFFD: refuse rather
// than store something other than what was given. A well-formed pair is one code point in `u` mode.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The one error of a failed decryption, whatever the cause (wrong key, wrong AAD, tampering, a
 * malformed token, an unknown version). Its message is fixed: telling the causes apart would
 * help an attacker, and a message must never carry key material, plaintext or the token.
 */
export class DecryptionError extends Error {
  override readonly name = 'DecryptionError';

  constructor() {
    super('decryption failed');
  }
}

/** A fresh random data key for one vault. */
export function generateDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** The AAD of a vault's wrapped data key: a wrapped key only unwraps for its own vault. */
export function vaultKeyAad(vaultId: string): string {
  assert(vaultId.length > 0, 'a vault id is not empty');
  return `vault-key:${vaultId}`;
}

/** Encrypts a vault's data key under the master key, for storage in the vault row. */
export function wrapDataKey(masterKey: Buffer, dataKey: Buffer, vaultId: string): string {
  assert(dataKey.length === KEY_BYTES, 'a data key is 32 bytes');
  return encryptBytes(masterKey, dataKey, vaultKeyAad(vaultId));
}

/** Decrypts a vault's data key; throws `DecryptionError` if it is not this vault's key. */
export function unwrapDataKey(masterKey: Buffer, wrapped: string, vaultId: string): Buffer {
  const decrypted = decryptBytes(masterKey, wrapped, vaultKeyAad(vaultId));
  // Authenticated under the master key, so only a wrapping bug could produce another length.
  assert(decrypted.length === KEY_BYTES, 'an unwrapped data key is 32 bytes');
  return moveKeyBytes(decrypted);
}

export function encryptText(key: Buffer, plaintext: string, aad: string): string {
  assert(!LONE_SURROGATE.test(plaintext), 'plaintext is well-formed UTF-16');
  return encryptBytes(key, Buffer.from(plaintext, 'utf8'), aad);
}

export function decryptText(key: Buffer, token: string, aad: string): string {
  return decryptBytes(key, token, aad).toString('utf8');
}

function encryptBytes(key: Buffer, plaintext: Buffer, aad: string): string {
  assert(key.length === KEY_BYTES, 'an encryption key is 32 bytes');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const tag = cipher.getAuthTag();
  assert(tag.length === TAG_BYTES, 'GCM yields a 16-byte tag');
  return [
    ENVELOPE_VERSION,
    iv.toString('base64url'),
    tag.toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

function decryptBytes(key: Buffer, token: string, aad: string): Buffer {
  // A wrong-length key is a caller's bug, not a bad token: it fails loudly as an invariant.
  assert(key.length === KEY_BYTES, 'a decryption key is 32 bytes');
  const parts = parseToken(token);
  try {
    const decipher = createDecipheriv(CIPHER, key, parts.iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(parts.tag);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
  } catch {
    // The cause is dropped on purpose: node's message is harmless today, but nothing from the
    // attempt may ride along into a log.
    throw new DecryptionError();
  }
}

interface TokenParts {
  readonly iv: Buffer;
  readonly tag: Buffer;
  readonly ciphertext: Buffer;
}

function parseToken(token: string): TokenParts {
  const parts = token.split('.', 5);
  if (parts.length !== 4 || parts[0] !== ENVELOPE_VERSION) throw new DecryptionError();
  const iv = decodeBase64url(parts[1] ?? '');
  const tag = decodeBase64url(parts[2] ?? '');
  const ciphertext = decodeBase64url(parts[3] ?? '');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new DecryptionError();
  return { iv, tag, ciphertext };
}

/** Strict: node's decoder skips characters it does not know, which would accept altered text. */
function decodeBase64url(text: string): Buffer {
  if (!BASE64URL.test(text)) throw new DecryptionError();
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw new DecryptionError();
  return bytes;
}

/**
 * Moves key material into a buffer of its own and zeroes the source: small buffers from
 * `Buffer.concat` and `Buffer.from` share node's pool, which would keep the key beside unrelated
 * data, where nothing owns it to wipe it.
 */
export function moveKeyBytes(bytes: Buffer): Buffer {
  const copy = Buffer.alloc(bytes.length);
  bytes.copy(copy);
  bytes.fill(0);
  return copy;
}
