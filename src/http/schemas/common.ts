import { z } from 'zod';
import {
  ImpreciseNumber,
  isStorableText,
  SCALE_MAX,
  STORABLE_TEXT_ERROR,
  type CurrencyInfo,
} from '../../core/index.js';
import { PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '../../store/store.js';

/*
 * Schemas shared by routes: the one source of truth for validation, typing and the OpenAPI
 * document. Amounts are taken as the client sends them and parsed by the core with the
 * currency's scale in the handler, so their refusals are the contract's `invalid_amount`.
 */

export const amountInput = z
  .custom<number | string | ImpreciseNumber>(
    (value) =>
      typeof value === 'number' || typeof value === 'string' || value instanceof ImpreciseNumber,
    { error: 'must be a number or a decimal string' },
  )
  .meta({
    type: ['number', 'string'],
    description: 'A decimal amount: a JSON number or a decimal string such as "125.50".',
  });

/**
 * Text a client sends: length-bounded, and through the one text check (`isStorableText`, which
 * the policy document uses too). A lone UTF-16 surrogate can be written in JSON but not stored
 * (UTF-8 cannot carry it) nor encrypted, and NUL fits no PostgreSQL text, so either is refused
 * at the edge as a parameter error instead of failing deeper down. Every string field of a
 * request body is one of these.
 */
export function text(min: number, max: number) {
  return z.string().min(min).max(max).refine(isStorableText, { error: STORABLE_TEXT_ERROR });
}

/** Contract section 1: at most 50 keys of 1-40 characters, string values of at most 500. */
export const metadataInput = z
  .record(text(1, 40), text(0, 500))
  .refine((value) => Object.keys(value).length <= 50, { error: 'has more than 50 keys' });

/** A metadata update: a key set to a string is set, a key set to null is removed (section 1). */
export const metadataChangesInput = z.record(text(1, 40), text(0, 500).nullable());

export const moneyOutput = z.string().meta({ description: 'A decimal amount, e.g. "125.50".' });
export const timestampOutput = z.string().meta({ description: 'ISO 8601 UTC.' });

/**
 * A path's id. Any text is taken, since a malformed id is simply one that names nothing: the
 * route's lookup answers it 404 with its kind's `*_not_found`, as for another account's id
 * (contract section 3, amendments), so a typo tells a client no more than a stranger's id.
 * What SQL text cannot carry (NUL, a lone surrogate) becomes U+FFFD, which no id holds either,
 * so the lookup still finds nothing; the store echoes at most 64 characters of it.
 */
export const idParams = z.object({
  id: z
    .string()
    .transform((id) => id.toWellFormed().replaceAll('\u0000', '\uFFFD'))
    .meta({ description: 'The object id; one that names nothing the caller can see is a 404.' }),
});

/** Page sizes of every list (contract section 4): the store's bounds, 10 by default. */
export const pageLimit = z.coerce
  .number()
  .int()
  .min(PAGE_LIMIT_MIN)
  .max(PAGE_LIMIT_MAX)
  .default(10);

export const paginationQuery = {
  limit: pageLimit,
  startingAfter: text(1, 64).optional(),
};

/**
 * A store page as contract section 4 lists it, each record through its presenter. Structural,
 * so the schemas need no store import.
 */
export function presentPage<T, Out>(
  page: {
    readonly data: readonly T[];
    readonly hasMore: boolean;
    readonly nextCursor: string | null;
  },
  present: (record: T) => Out,
) {
  return {
    object: 'list' as const,
    data: page.data.map((record) => present(record)),
    hasMore: page.hasMore,
    nextCursor: page.nextCursor,
  };
}

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    object: z.literal('list'),
    data: z.array(item),
    hasMore: z.boolean(),
    nextCursor: z.string().nullable(),
  });
}

/**
 * The second factor of contract section 2, for the routes behind it. Loose: every other
 * header (the key among them) must pass through validation untouched.
 */
export const twoFactorHeaders = z.looseObject({
  'x-two-factor-code': z
    .string()
    .max(16)
    .optional()
    .meta({ description: 'A current TOTP code, when the account has two-factor on.' }),
});

/**
 * An amount whose currency is not known yet (a list filter's bound, a settlement record):
 * parsed at the finest scale any currency has, so only its form is checked here.
 */
export const ANY_CURRENCY: CurrencyInfo = {
  code: 'any',
  name: 'any currency',
  network: 'solana',
  scale: SCALE_MAX,
};
