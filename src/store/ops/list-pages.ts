import { assert, SpendgateError } from '../../core/index.js';
import { isIdOf, type IdKind } from '../../ids.js';
import { LIMIT_MAX, LIMIT_MIN, type Page } from '../port/pages.js';

/**
 * What every list operation shares (ops/lists.ts, ops/transaction-list.ts): the checks of a
 * page's bounds (the page itself is the port's, port/pages.ts), `pageOf`, and `Conditions`,
 * which assembles a WHERE clause from fixed SQL fragments and numbered placeholders, so that
 * no caller value is ever spliced into SQL text.
 */

/**
 * A WHERE fragment: fixed SQL text around the placeholder of its one parameter (which it may
 * use more than once).
 */
export type Fragment = (placeholder: string) => string;

/** Conditions joined by AND, each with its parameter; an absent (undefined) value adds nothing. */
export class Conditions {
  readonly #clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Binds `value` and returns its placeholder. */
  bind(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(fragment: Fragment, value: unknown): this {
    if (value !== undefined) this.#clauses.push(fragment(this.bind(value)));
    return this;
  }

  get sql(): string {
    assert(this.#clauses.length > 0, 'every list is scoped');
    return this.#clauses.join(' AND ');
  }
}

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < LIMIT_MIN || limit > LIMIT_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `limit must be an integer from ${LIMIT_MIN} to ${LIMIT_MAX}.`,
      'limit',
    );
  }
}

export function checkIdCursor(kind: IdKind, startingAfter: string | undefined): void {
  if (startingAfter !== undefined && !isIdOf(kind, startingAfter)) {
    throw new SpendgateError(
      'parameter_invalid',
      `startingAfter must be the id of a ${kind} from a previous page.`,
      'startingAfter',
    );
  }
}

// 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z: what a YYYY-MM-DD day can name and
// well inside PostgreSQL's timestamptz range, so a bound never fails in the database.
export const EPOCH_MS_MIN = -62_135_596_800_000;
export const EPOCH_MS_MAX = 253_402_300_799_999;

export function checkEpochMs(value: number | undefined, param: string, max = EPOCH_MS_MAX): void {
  if (
    value !== undefined &&
    (!Number.isSafeInteger(value) || value < EPOCH_MS_MIN || value > max)
  ) {
    throw new SpendgateError(
      'parameter_invalid',
      `${param} must be a time between the years 1 and 9999.`,
      param,
    );
  }
}

/**
 * Turns `limit + 1` fetched rows into a page. Fetching one row more than the page holds tells
 * whether a next page exists from the same index range scan, with no count(*) (which would
 * read every matching row) and no second query (whose answer could disagree with the first
 * under concurrent inserts). The extra row is dropped; the cursor is the last row kept.
 */
export function pageOf<Row, T>(
  rows: readonly Row[],
  limit: number,
  map: (row: Row) => T,
  cursorOf: (record: T) => string,
): Page<T> {
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit).map(map);
  const last = data.at(-1);
  return {
    data,
    hasMore,
    nextCursor: hasMore && last !== undefined ? cursorOf(last) : null,
  };
}

export const byId = (record: { readonly id: string }): string => record.id;
