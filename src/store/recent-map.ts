import { assert } from '../core/index.js';

/**
 * A map that forgets its oldest entry past `entriesMax`: what this process remembers per
 * card or vault is bounded, and forgetting costs a statement, never a wrong answer.
 */
export class RecentMap<V> {
  readonly #entries = new Map<string, V>();
  readonly #entriesMax: number;

  constructor(entriesMax: number) {
    assert(entriesMax > 0, 'a RecentMap holds at least one entry');
    this.#entriesMax = entriesMax;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Forgets `key`'s entry; what is forgotten is read again when next needed. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  set(key: string, value: V): void {
    if (this.#entries.get(key) === value) return;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#entriesMax) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }
}
