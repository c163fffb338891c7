import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

/**
 * The one typed error of spendgate: a catalogue code, an optional `param` (the JSON path of the
 * field at fault, as contract section 3 writes it) and a message safe to show a client. Every
 * refusal of user input is one of these; anything else that is thrown is a bug.
 *
 * The message says what is wrong with the field in a sentence of its own; it names the field
 * by its last key ("value must be ...") and leaves the path to `param`, so the two never say
 * the same thing twice.
 */
export class SpendgateError extends Error {
  // Typed `string`, not the literal, so that each subclass can give its own name.
  override readonly name: string = 'SpendgateError';
  readonly code: ErrorCode;
  readonly param: string | undefined;

  constructor(code: ErrorCode, message?: string, param?: string) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.code = code;
    this.param = param;
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

/** A policy refused at compile time; `param` points at the fault, e.g. `rules[2].conditions.all[0].operator`. */
export class PolicyInvalidError extends SpendgateError {
  override readonly name: string = 'PolicyInvalidError';

  constructor(message: string, param: string) {
    super('policy_invalid', message, param);
  }
}

/**
 * Formats a path of keys and indexes the way contract section 3 writes `param`:
 * `['rules', 2, 'conditions']` becomes `rules[2].conditions`. A key that is not a plain
 * identifier is written `["a key"]`, so that every path reads back to exactly one place.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Longer keys are not echoed in a message; `param` still has them. */
const SUBJECT_KEY_LENGTH_MAX = 64;

/**
 * The field a message is about, named by its last key rather than its whole path (which is
 * the error's `param`): `rules[0].conditions.all[0].value` is "value", `block[1]` is
 * "Item 1 of block", the empty path `whole` (for example "The policy").
 */
export function fieldSubject(path: readonly PropertyKey[], whole: string): string {
  const last = path[path.length - 1];
  if (last === undefined) return whole;
  if (typeof last === 'number') {
    const parent = path[path.length - 2];
    return parent === undefined || typeof parent === 'number'
      ? `Item ${last}`
      : `Item ${last} of ${keyWords(parent)}`;
  }
  return keyWords(last);
}

function keyWords(key: PropertyKey): string {
  const text = String(key);
  if (text.length > SUBJECT_KEY_LENGTH_MAX) return 'A field';
  return IDENTIFIER.test(text) ? text : JSON.stringify(text);
}

// One segment of a formatted path: `["a key"]`, `[3]` or `name`.
const PATH_SEGMENT = /\[("(?:[^"\\]|\\.)*")\]|\[(\d+)\]|([^.[\]]+)/g;
/** A param longer than this is named as a whole ("The field") rather than read back. */
const PARAM_LENGTH_MAX = 1024;

/** The keys of a path formatted by `formatPath`: its inverse, for a param held as text. */
export function parsePath(param: string): PropertyKey[] {
  if (param.length > PARAM_LENGTH_MAX) return [];
  const keys: PropertyKey[] = [];
  for (const segment of param.matchAll(PATH_SEGMENT)) {
    if (segment[1] !== undefined) keys.push(quotedKey(segment[1]));
    else if (segment[2] !== undefined) keys.push(Number(segment[2]));
    else keys.push(segment[3] as string);
  }
  return keys;
}

/** A key written `["..."]`; text that is not a JSON string (a caller's own param) as written. */
function quotedKey(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted;
  }
}
