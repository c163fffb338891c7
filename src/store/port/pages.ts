/*
 * The page every list operation answers, and its bounds (ops/list-pages.ts checks them and
 * assembles the pages).
 */

/** One page of a list: contract section 4 without `object: "list"` (the presenter adds it). */
export interface Page<T> {
  readonly data: T[];
  readonly hasMore: boolean;
  /** The last id (or day) of `data` when there is a next page, else null. */
  readonly nextCursor: string | null;
}

/** A page's `limit`, at least and at most. */
export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;

/**
 * Filters accept `undefined` as "absent" as well as a missing key: what a schema parser's
 * output holds for an optional query parameter under exactOptionalPropertyTypes.
 */
export interface PageQuery {
  readonly limit: number;
  readonly startingAfter?: string | undefined;
}
