import { POLICY_BOUNDS } from './bounds.js';
import { isCountryCode, isMccCode } from './countries.js';
import {
  LIMIT_CURRENCY,
  LIMIT_INTERVALS,
  RULE_MODES,
  type LimitDocument,
  type PolicyDocument,
  type RuleDocument,
  type TemplateRefDocument,
} from './schema.js';

/**
 * The fast reading of a policy document: the structure `policySchema` (schema.ts) checks,
 * written out by hand for the documents clients actually send, in a few microseconds where zod
 * takes a few hundred. It only ever accepts: anything it is not sure of (an unknown key, a key
 * present as `undefined`, an object that is not plain JSON, text with control characters or
 * surrogates, a value out of bounds) makes it answer null, and the compiler then reads the
 * document with zod, which finds and words the fault exactly as before. What it accepts, it
 * returns as zod would: new objects and arrays, keys in the schema's order, defaults applied,
 * condition trees and template parameters' values as given.
 *
 * `test/core/fast-compile.property.test.ts` holds it to `policySchema` on random documents.
 * A change to the schema must be made here too (or here removed): that test fails until it is.
 */
export function readPolicyDocument(input: unknown): PolicyDocument | null {
  if (!isJsonObject(input)) return null;
  for (const key in input) if (!POLICY_KEYS.has(key)) return null;
  const document: Mutable<PolicyDocument> = {};
  if ('limits' in input) {
    const limits = readArray(input['limits'], POLICY_BOUNDS.limitsMax, readLimit);
    if (limits === null) return null;
    document.limits = limits;
  }
  if ('merchantCategories' in input) {
    const lists = readAllowOrBlock(input['merchantCategories'], isMcc);
    if (lists === null) return null;
    document.merchantCategories = lists;
  }
  if ('merchantCountries' in input) {
    const lists = readAllowOrBlock(input['merchantCountries'], isCountry);
    if (lists === null) return null;
    document.merchantCountries = lists;
  }
  if ('templates' in input) {
    const templates = readArray(input['templates'], POLICY_BOUNDS.templatesMax, readTemplateRef);
    if (templates === null) return null;
    document.templates = templates;
  }
  if ('rules' in input) {
    const rules = readArray(input['rules'], POLICY_BOUNDS.rulesMax, readRule);
    if (rules === null) return null;
    document.rules = rules;
  }
  return document;
}

/**
 * Text the fast path takes as it is: no control character (NUL among them) and no UTF-16
 * surrogate, so no check of storable text can refuse it. Any other text sends the policy to
 * the exact path, which applies the schema's own text check.
 */
export function isPlainText(text: string): boolean {
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const POLICY_KEYS: ReadonlySet<string> = new Set([
  'limits',
  'merchantCategories',
  'merchantCountries',
  'templates',
  'rules',
]);
const LIMIT_KEYS: ReadonlySet<string> = new Set([
  'interval',
  'amount',
  'count',
  'merchantCategories',
  'currency',
]);
const LIST_KEYS: ReadonlySet<string> = new Set(['allow', 'block']);
const TEMPLATE_REF_KEYS: ReadonlySet<string> = new Set(['name', 'params', 'mode']);
const RULE_KEYS: ReadonlySet<string> = new Set(['name', 'action', 'mode', 'message', 'conditions']);
const INTERVALS: ReadonlySet<unknown> = new Set(LIMIT_INTERVALS);
const MODES: ReadonlySet<unknown> = new Set(RULE_MODES);
/** ruleNameSchema's pattern (schema.ts). */
const RULE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
/** templateRefSchema's bound on a template name (schema.ts). */
const TEMPLATE_NAME_LENGTH_MAX = 64;

/**
 * A plain JSON object: what `JSON.parse` makes. zod takes more (class instances, objects
 * without a prototype); those go to zod.
 */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
  );
}

/** A copy of a JSON array of at most `max` items, each read by `read`; null if any is not sure. */
function readArray<T>(value: unknown, max: number, read: (item: unknown) => T | null): T[] | null {
  if (!Array.isArray(value) || value.length > max) return null;
  const list: readonly unknown[] = value;
  const out: T[] = [];
  for (let index = 0; index < list.length; index++) {
    const item = read(list[index]);
    if (item === null) return null;
    out.push(item);
  }
  return out;
}

function isMcc(value: unknown): value is string {
  return typeof value === 'string' && isMccCode(value);
}

function isCountry(value: unknown): value is string {
  return typeof value === 'string' && isCountryCode(value);
}

/** A non-empty list of codes, copied; bounded by the policy's list-value bound. */
function readCodes(value: unknown, isCode: (item: unknown) => item is string): string[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  if (value.length > POLICY_BOUNDS.listValuesMax) return null;
  const list: readonly unknown[] = value;
  const out: string[] = [];
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    if (!isCode(item)) return null;
    out.push(item);
  }
  return out;
}

/** limitSchema (schema.ts) by hand; also reads a template's limits in a fast compile. */
export function readLimit(value: unknown): LimitDocument | null {
  if (!isJsonObject(value)) return null;
  for (const key in value) if (!LIMIT_KEYS.has(key)) return null;
  const interval = value['interval'];
  if (!INTERVALS.has(interval)) return null;
  const limit: Mutable<LimitDocument> = { interval: interval as LimitDocument['interval'] };
  if ('amount' in value) {
    const amount = value['amount'];
    if (typeof amount === 'string' || (typeof amount === 'number' && Number.isFinite(amount))) {
      limit.amount = amount;
    } else {
      return null;
    }
  }
  if ('count' in value) {
    const count = value['count'];
    if (!Number.isSafeInteger(count)) return null;
    if ((count as number) < 0 || (count as number) > POLICY_BOUNDS.countMax) return null;
    limit.count = count as number;
  }
  if ('merchantCategories' in value) {
    const codes = readCodes(value['merchantCategories'], isMcc);
    if (codes === null) return null;
    limit.merchantCategories = codes;
  }
  if ('currency' in value) {
    const currency = value['currency'];
    if (typeof currency !== 'string' || !LIMIT_CURRENCY.test(currency)) return null;
    limit.currency = currency;
  }
  // limitSchema's refinement: an amount or a count, and a count needs a calendar interval.
  if ('amount' in limit === 'count' in limit) return null;
  if ('currency' in limit && !('amount' in limit)) return null;
  if ('count' in limit && limit.interval === 'perTransaction') return null;
  return limit;
}

function readAllowOrBlock(
  value: unknown,
  isCode: (item: unknown) => item is string,
): { allow?: string[]; block?: string[] } | null {
  if (!isJsonObject(value)) return null;
  for (const key in value) if (!LIST_KEYS.has(key)) return null;
  // The refinement: exactly one of the two.
  if ('allow' in value === 'block' in value) return null;
  const which = 'allow' in value ? 'allow' : 'block';
  const codes = readCodes(value[which], isCode);
  if (codes === null) return null;
  return which === 'allow' ? { allow: codes } : { block: codes };
}

function readTemplateRef(value: unknown): TemplateRefDocument | null {
  if (!isJsonObject(value)) return null;
  for (const key in value) if (!TEMPLATE_REF_KEYS.has(key)) return null;
  const name = value['name'];
  if (typeof name !== 'string' || name.length === 0 || name.length > TEMPLATE_NAME_LENGTH_MAX) {
    return null;
  }
  // The name must name a library template, whose names are plain; the compiler checks that.
  const ref: Mutable<TemplateRefDocument> = { name, mode: 'enforce' };
  if ('params' in value) {
    const params = readParams(value['params']);
    if (params === null) return null;
    ref.params = params;
  }
  if ('mode' in value) {
    if (!MODES.has(value['mode'])) return null;
    ref.mode = value['mode'] as TemplateRefDocument['mode'];
  }
  // Keys in the schema's order: name, params, mode.
  return 'params' in ref ? { name, params: ref.params, mode: ref.mode } : { name, mode: ref.mode };
}

/** Template parameters: a plain object of string keys, copied; values as given. */
function readParams(value: unknown): Record<string, unknown> | null {
  if (!isJsonObject(value)) return null;
  // zod's record refuses a symbol key and silently drops `__proto__`: both go to zod.
  if (Object.getOwnPropertySymbols(value).length !== 0) return null;
  const params: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return null;
    params[key] = value[key];
  }
  return params;
}

function readRule(value: unknown): RuleDocument | null {
  if (!isJsonObject(value)) return null;
  for (const key in value) if (!RULE_KEYS.has(key)) return null;
  const name = value['name'];
  if (typeof name !== 'string' || name.length > POLICY_BOUNDS.ruleNameLengthMax) return null;
  if (!RULE_NAME_PATTERN.test(name)) return null;
  let action: RuleDocument['action'] = 'decline';
  if ('action' in value) {
    if (value['action'] !== 'decline') return null;
    action = value['action'];
  }
  let mode: RuleDocument['mode'] = 'enforce';
  if ('mode' in value) {
    if (!MODES.has(value['mode'])) return null;
    mode = value['mode'] as RuleDocument['mode'];
  }
  // conditions is required (present, even as undefined, for zod); an undefined one goes to zod.
  const conditions = value['conditions'];
  if (conditions === undefined) return null;
  if (!('message' in value)) return { name, action, mode, conditions };
  const message = value['message'];
  if (typeof message !== 'string' || message.length === 0) return null;
  if (message.length > POLICY_BOUNDS.messageLengthMax || !isPlainText(message)) return null;
  return { name, action, mode, message, conditions };
}
