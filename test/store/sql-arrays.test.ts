import fc from 'fast-check';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { arrayLiteral, withArrayLiterals } from '../../src/store/sql/array-literal.js';
import { SqlParams } from '../../src/store/sql/params.js';
import { forEachDatabase } from '../support/databases.js';

// pg's own encoder, the reference the literal must equal byte for byte (pg has no types for it).
const pgUtils = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue(value: unknown): unknown;
};

/** Strings with what an array literal must escape or keep: quotes, backslashes, braces, commas. */
const awkwardText = fc.string({
  unit: fc.constantFrom('a', 'Z', '"', '\\', '{', '}', ',', ' ', 'NULL', 'é', '\n', '0'),
  maxLength: 12,
});
const element = fc.oneof(
  awkwardText,
  fc.string({ maxLength: 40 }),
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
);

describe('array literals (src/store/sql/array-literal.ts)', () => {
  it('are what pg makes of the same array, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 40 }), (values) => {
        expect(arrayLiteral(values)).toBe(pgUtils.prepareValue(values));
      }),
      { numRuns: 500 },
    );
  });

  it('leave an array of anything else to pg, and every other parameter as it is', () => {
    const date = new Date(0);
    expect(arrayLiteral(['a', date])).toBeUndefined();
    expect(arrayLiteral([['nested']])).toBeUndefined();
    const mixed = [['a', null], [date], 'text', 7, null];
    expect(withArrayLiterals(mixed)).toEqual(['{"a",NULL}', [date], 'text', 7, null]);
  });
});

forEachDatabase('SQL arrays on the server', (database) => {
  afterAll(() => database.close());

  it('reads back every string of a text array as it was bound', async () => {
    const client = await database.client();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(awkwardText), { maxLength: 20 }), async (values) => {
        const { rows } = await client.query<{ values: (string | null)[] | null }>(
          'SELECT $1::text[] AS values',
          [values],
        );
        expect(rows[0]?.values).toEqual(values);
      }),
      { numRuns: 30 },
    );
  });

  it('unnests a JSON array beside text arrays, row by row in order', async () => {
    const client = await database.client();
    const objects = [{ id: 'a', note: 'quote " and \\ back' }, { id: 'b', n: [1, 2] }, { id: 'c' }];
    const params = new SqlParams();
    const rows = params.unnest('r', {
      name: params.texts(['first', 'second', 'third']),
      payload: params.jsons(objects),
    });
    expect(rows).toMatch(
      /^ROWS FROM \(unnest\(\$1::text\[\]\), jsonb_array_elements\(\$2::jsonb\)\)/,
    );
    const { rows: read } = await client.query<{ name: string; id: string; payload: unknown }>(
      `SELECT name, payload->>'id' AS id, payload FROM ${rows}`,
      params.values,
    );
    expect(read).toEqual([
      { name: 'first', id: 'a', payload: objects[0] },
      { name: 'second', id: 'b', payload: objects[1] },
      { name: 'third', id: 'c', payload: objects[2] },
    ]);
  });

  it('refuses columns of different lengths before anything is sent', () => {
    const params = new SqlParams();
    const names = params.texts(['one', 'two']);
    const payloads = params.jsons([{ id: 'a' }]);
    expect(() => params.unnest('r', { name: names, payload: payloads })).toThrow(
      /one element per row/,
    );
  });
});
