/**
 * A JS array parameter as PostgreSQL's array literal (`{"a","b",NULL}`), made before pg sees
 * it, for the arrays of strings, numbers and booleans the store binds.
 *
 * Why not pg's own (its utils.arrayString): it runs two regular-expression replaces over every
 * element, quote or not, and on the authorize path's write (about twenty arrays of up to 32
 * elements) that was the largest function of the service's CPU profile under load, after the
 * socket writes and garbage collection (docs/performance.md). Here an element without a quote
 * or a backslash, nearly all of them, is copied as it is; the literal is byte for byte the one
 * pg makes.
 */
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/** The literal, or undefined for an array with anything else in it: pg then encodes it. */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  let literal = '{';
  for (let index = 0; index < values.length; index += 1) {
    if (index > 0) literal += ',';
    const value = values[index];
    if (value === null || value === undefined) {
      literal += 'NULL';
      continue;
    }
    let text: string;
    if (typeof value === 'string') text = value;
    else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
    else return undefined;
    literal += NEEDS_ESCAPE.test(text) ? `"${text.replace(ESCAPED, '\\$&')}"` : `"${text}"`;
  }
  return `${literal}}`;
}

/** The statement's parameters with each such array as its literal; the rest as they are. */
export function withArrayLiterals(params: readonly unknown[]): unknown[] {
  return params.map((param) => (Array.isArray(param) ? (arrayLiteral(param) ?? param) : param));
}
