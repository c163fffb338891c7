import { z } from 'zod';
import { ImpreciseNumber } from '../../core/index.js';

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

/** Contract section 1: at most 50 keys of 1-40 characters, string values of at most 500. */
export const metadataInput = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((value) => Object.keys(value).length <= 50, { error: 'has more than 50 keys' });

export const moneyOutput = z.string().meta({ description: 'A decimal amount, e.g. "125.50".' });
export const timestampOutput = z.string().meta({ description: 'ISO 8601 UTC.' });

export const idParams = z.object({ id: z.string().min(1).max(64) });

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(10),
  startingAfter: z.string().min(1).max(64).optional(),
};

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    object: z.literal('list'),
    data: z.array(item),
    hasMore: z.boolean(),
    nextCursor: z.string().nullable(),
  });
}
