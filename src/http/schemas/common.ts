import { z } from 'zod';
import { ImpreciseNumber, SCALE_MAX, type CurrencyInfo } from '../../core/index.js';

/**
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
 * Text a client sends: length-bounded, and well-formed Unicode. A lone UTF-16 surrogate can
 * be written in JSON but not stored faithfully (UTF-8 cannot carry it) nor encrypted, so it is
 * refused at the edge as a parameter error instead of failing deeper down.
 */
export function text(min: number, max: number) {
  return z
    .string()
    .min(min)
    .max(max)
    .refine((value) => value.isWellFormed() && !value.includes('\u0000'), {
      error: 'must be well-formed Unicode text without NUL characters',
    });
}

/** Contract section 1: at most 50 keys of 1-40 characters, string values of at most 500. */
export const metadataInput = z
  .record(text(1, 40), text(0, 500))
  .refine((value) => Object.keys(value).length <= 50, { error: 'has more than 50 keys' });

export const moneyOutput = z.string().meta({ description: 'A decimal amount, e.g. "125.50".' });
export const timestampOutput = z.string().meta({ description: 'ISO 8601 UTC.' });

/** Ids are a kind prefix and hex: anything else can name no object. */
export const idParams = z.object({
  id: z.string().regex(/^[a-z]{2,4}_[0-9a-f]{1,60}$/, { error: 'is not an id' }),
});

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(10),
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
