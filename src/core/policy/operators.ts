/** The ten json-rules-engine operators a policy condition may use (contract section 11). */
export const OPERATORS = [
  'equal',
  'notEqual',
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
  'in',
  'notIn',
  'contains',
  'doesNotContain',
] as const;

export type Operator = (typeof OPERATORS)[number];

export type OrderingOperator =
  'lessThan' | 'lessThanInclusive' | 'greaterThan' | 'greaterThanInclusive';

export const ORDERING_OPERATORS: ReadonlySet<Operator> = new Set([
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
]);

export const LIST_OPERATORS: ReadonlySet<Operator> = new Set(['in', 'notIn']);

/** Substring tests; json-rules-engine applies them to arrays only, spendgate to strings (rules/README.md). */
export const SUBSTRING_OPERATORS: ReadonlySet<Operator> = new Set(['contains', 'doesNotContain']);
