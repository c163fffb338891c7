import { assert } from '../assert.js';
import { givenNumber, givenWords } from '../errors/given.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import type { CompiledPolicy } from './compile.js';

/**
 * Compiled policies by (vault, policy version), least recently used evicted first. A version
 * is never reused for other content (it increments on each set), so an entry never goes stale;
 * the bound only caps memory. A Map iterates in insertion order, so re-inserting on a hit
 * keeps the least recently used entry first.
 */
export class CompiledPolicyCache {
  readonly #entries = new Map<string, CompiledPolicy>();
  readonly entriesMax: number;

  constructor(entriesMax = 10_000) {
    // A library caller's argument: refused by name, not asserted.
    if (!Number.isSafeInteger(entriesMax) || entriesMax <= 0) {
      throw new SpendgateError(
        'parameter_invalid',
        `entriesMax must be a positive integer, not ${givenNumber(entriesMax)}.`,
        'entriesMax',
      );
    }
    this.entriesMax = entriesMax;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(vaultId: string, version: number): CompiledPolicy | undefined {
    const key = cacheKey(vaultId, version);
    const hit = this.#entries.get(key);
    if (hit !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  /** Returns the cached policy, or compiles, caches and returns it. */
  getOrCompile(vaultId: string, version: number, compile: () => CompiledPolicy): CompiledPolicy {
    const hit = this.get(vaultId, version);
    if (hit !== undefined) return hit;
    const compiled = compile();
    this.#entries.set(cacheKey(vaultId, version), compiled);
    if (this.#entries.size > this.entriesMax) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    assert(this.#entries.size <= this.entriesMax, 'the cache stays within its bound');
    return compiled;
  }

  /** Drops every version of a vault's policy (on delete, or when a vault closes). */
  evictVault(vaultId: string): void {
    const prefix = `${vaultId}\u0000`;
    for (const key of [...this.#entries.keys()]) {
      if (key.startsWith(prefix)) this.#entries.delete(key);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

function cacheKey(vaultId: string, version: number): string {
  if (typeof vaultId !== 'string') {
    throw new SpendgateError(
      'parameter_invalid',
      `vaultId must be a string, not ${givenWords(vaultId)}.`,
      'vaultId',
    );
  }
  if (!Number.isSafeInteger(version) || version <= 0) {
    throw new SpendgateError(
      'parameter_invalid',
      `version must be a positive integer, not ${givenNumber(version)}.`,
      'version',
    );
  }
  return `${vaultId}\u0000${version}`;
}
