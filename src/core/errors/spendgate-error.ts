import { ERROR_CATALOGUE, type ErrorCode } from './catalogue.js';

/**
 * The one typed error of spendgate: a catalogue code, an optional `param` (the JSON path of the
 * field at fault, as contract section 3 writes it) and a message safe to show a client. Every
 * refusal of user input is one of these; anything else that is thrown is a bug.
 */
export class SpendgateError extends Error {
  override readonly name = 'SpendgateError';
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
