import { createHash } from 'node:crypto';

export const API_KEY_HASH_HEX_LENGTH = 64;

/**
 * API keys are stored as hashes only, so a copy of the database does not hold usable keys. A
 * fast unsalted SHA-256 suffices because the keys are long random strings, not passwords: there
 * is nothing to guess, and the same input always giving the same hash lets the store find a key
 * by an indexed lookup on its hash.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
