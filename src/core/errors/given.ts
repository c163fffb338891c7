import { ImpreciseNumber } from '../money/imprecise-number.js';

/*
 * What a caller gave, in the words a refusal uses: "must be a list, not an integer". A message
 * names the type (or a number that is not an integer), never echoes text of any size.
 */

/**
 * What was given: its JSON type with an article ("a string"), or for a number that is not an
 * integer, the number itself ("must be an integer, not 1.5").
 */
export function givenWords(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) && !Number.isInteger(value)
    ? String(value)
    : jsonTypeOf(value);
}

/**
 * What was given where a number was wanted in a range: the number itself ("must be a positive
 * integer, not 0"), or what `givenWords` says of anything else.
 */
export function givenNumber(value: unknown): string {
  return typeof value === 'number' ? String(value) : givenWords(value);
}

/** The JSON type of a value, with its article; NaN and the infinities by name. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  // The HTTP body parser's stand-in for a number literal too long to hold exactly.
  if (value instanceof ImpreciseNumber) return 'a number';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
      return Number.isInteger(value) ? 'an integer' : 'a number';
    case 'boolean':
      return 'a boolean';
    case 'undefined':
      return 'nothing';
    case 'bigint':
      return 'a bigint';
    case 'object':
      return 'an object';
    default:
      return `a ${typeof value}`;
  }
}
