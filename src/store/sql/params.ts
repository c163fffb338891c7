import { assert } from '../../core/index.js';

/** A statement's parameters at most: PostgreSQL's protocol counts them in 16 bits. */
const PARAMS_MAX = 65_535;

/**
 * Positional parameters bound where the SQL uses them: each method appends a value and
 * returns its reference (`$7`, `$8::text[]`), so a statement of thirty parameters reads by
 * name and nobody counts to thirty. A statement binds in the order its text is built, so the
 * same code gives the same text every call: one prepared statement (and generic plan) per
 * text, as the authorize path needs.
 */
export class SqlParams {
  readonly values: unknown[] = [];
  /** Elements of each array bound, by reference: `unnest` checks its columns are parallel. */
  readonly #arrayLengths = new Map<string, number>();
  /** The references bound by `jsons`: `unnest` reads them with jsonb_array_elements. */
  readonly #jsonArrays = new Set<string>();

  /** One scalar value; `cast` names its SQL type where the server could not infer it. */
  value(value: unknown, cast?: string): string {
    assert(this.values.length < PARAMS_MAX, 'a statement binds at most 65,535 parameters');
    this.values.push(value);
    const ref = `$${this.values.length}`;
    return cast === undefined ? ref : `${ref}::${cast}`;
  }

  texts(values: readonly (string | null)[]): string {
    return this.#array(values, 'text[]');
  }

  integers(values: readonly number[]): string {
    assert(
      values.every((value) => Number.isSafeInteger(value)),
      'an integer array holds integers',
    );
    return this.#array(values, 'integer[]');
  }

  booleans(values: readonly boolean[]): string {
    return this.#array(values, 'boolean[]');
  }

  /**
   * Objects as one JSON array (`$7::jsonb`), a column of `unnest` whose rows are jsonb. Why not
   * an array of JSON texts: each text would be made by JSON.stringify and then quoted again as
   * an element of the array's literal (pg escapes every quote of it, and PostgreSQL unescapes
   * them); one JSON.stringify of the whole array is the only encoding, in native code.
   */
  jsons(values: readonly object[]): string {
    const ref = this.#column(JSON.stringify(values), values.length, 'jsonb');
    this.#jsonArrays.add(ref);
    return ref;
  }

  /**
   * `unnest(...) AS alias(column, ...)`: rows made of parallel arrays, each named by the column
   * it becomes, so a name and its values cannot fall out of step. Every array is one of this
   * builder's and all have one element per row.
   */
  unnest(alias: string, columns: Readonly<Record<string, string>>): string {
    const names = Object.keys(columns);
    const refs = Object.values(columns);
    assert(names.length > 0, 'unnest reads at least one array');
    const lengths = refs.map((ref) => this.#arrayLengths.get(ref));
    assert(
      lengths.every((length) => length !== undefined && length === lengths[0]),
      `every column of ${alias} is an array of this statement with one element per row`,
    );
    const columnList = `${alias}(${names.join(', ')})`;
    if (!refs.some((ref) => this.#jsonArrays.has(ref))) {
      return `unnest(${refs.join(', ')}) AS ${columnList}`;
    }
    // unnest(a, b) is ROWS FROM (unnest(a), unnest(b)): the same rows, side by side in order.
    const functions = refs.map((ref) =>
      this.#jsonArrays.has(ref) ? `jsonb_array_elements(${ref})` : `unnest(${ref})`,
    );
    return `ROWS FROM (${functions.join(', ')}) AS ${columnList}`;
  }

  #array(values: readonly unknown[], cast: string): string {
    return this.#column(values, values.length, cast);
  }

  /** A value bound as a column of `unnest`, `rows` long. */
  #column(value: unknown, rows: number, cast: string): string {
    const ref = this.value(value, cast);
    this.#arrayLengths.set(ref, rows);
    return ref;
  }
}
