import {
  isPlainObject,
  moneyConstant,
  pathTo,
  requirePlainText,
  spendListValues,
  type CheckContext,
} from './check-conditions.js';
import { isCountryCode, isMccCode } from './countries.js';
import { POLICY_BOUNDS } from './bounds.js';
import { givenNumber, givenWords } from '../errors/given.js';
import { policyError, type PathKey } from './parse-with.js';
import type { TemplateRefDocument } from './schema.js';
import type { TemplateDocument, TemplateLibrary, TemplateParam } from './template-schema.js';

/** A template with its parameters filled in: limits and rules still to be checked as a policy's. */
export interface ExpandedTemplate {
  readonly name: string;
  readonly limits: readonly unknown[];
  readonly rules: readonly { readonly message: string; readonly conditions: unknown }[];
}

/** A checked parameter value: an integer, an exact amount string, or a list of codes/strings. */
type ParamValue = number | string | readonly string[];

const NO_PARAMS: Readonly<Record<string, unknown>> = Object.freeze({});

/** Nesting a template file may have; library files are far shallower, so this only stops a loop. */
const SUBSTITUTION_DEPTH_MAX = 32;

/**
 * Looks a template up, validates the policy's parameters against the template's declarations
 * (errors point at `templates[i].params.name`) and substitutes them. List parameters count
 * against the policy's list-value bound; the template's own content is bounded by the library.
 */
export function expandTemplate(
  ref: TemplateRefDocument,
  library: TemplateLibrary,
  path: readonly PathKey[],
  ctx: CheckContext,
): ExpandedTemplate {
  const template = library.get(ref.name);
  if (template === undefined) {
    throw policyError(
      [...path, 'name'],
      library.size === 0
        ? 'must name a template, but no template library was given (options.templates)'
        : `must name a template of the rule library: ${[...library.keys()].join(', ')}`,
    );
  }
  const values = resolveParams(template, ref.params ?? NO_PARAMS, pathTo(ctx, path, 'params'), ctx);
  const substitute = (node: unknown): unknown => substituteParams(node, values, 0);
  return {
    name: template.name,
    limits: template.limits.map(substitute),
    rules: template.rules.map((rule) => ({
      message: interpolate(rule.message, values),
      conditions: substitute(rule.conditions),
    })),
  };
}

function resolveParams(
  template: TemplateDocument,
  given: Readonly<Record<string, unknown>>,
  path: readonly PathKey[],
  ctx: CheckContext,
): ReadonlyMap<string, ParamValue> {
  const declared = Object.keys(template.params);
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(template.params, name)) {
      const known = declared.length === 0 ? 'none' : declared.join(', ');
      throw policyError(
        [...path, name],
        `is not a parameter of ${template.name}; its parameters are ${known}`,
      );
    }
  }
  const values = new Map<string, ParamValue>();
  for (const name of declared) {
    const spec = template.params[name] as TemplateParam;
    const raw = Object.hasOwn(given, name) ? given[name] : spec.default;
    const paramPath = pathTo(ctx, path, name);
    if (raw === undefined) throw policyError(paramPath, 'is required');
    values.set(name, checkParam(spec, raw, paramPath, ctx));
  }
  return values;
}

function checkParam(
  spec: TemplateParam,
  raw: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
): ParamValue {
  switch (spec.type) {
    case 'integer':
      if (
        typeof raw !== 'number' ||
        !Number.isSafeInteger(raw) ||
        raw < spec.min ||
        raw > spec.max
      ) {
        throw policyError(
          path,
          `must be an integer from ${spec.min} to ${spec.max}, not ${givenNumber(raw)}`,
        );
      }
      return raw;
    case 'amount':
      // Substituted as the exact string, so the limit or condition re-parses the same value.
      return moneyConstant(raw, path, ctx).toFixed();
    case 'mccList':
      return checkList(
        raw,
        path,
        ctx,
        (item): item is string => typeof item === 'string' && isMccCode(item),
        'four-digit merchant category codes',
      );
    case 'countryList':
      return checkList(
        raw,
        path,
        ctx,
        (item): item is string => typeof item === 'string' && isCountryCode(item),
        'ISO 3166-1 alpha-2 country codes',
      );
    case 'stringList':
      return checkList(
        raw,
        path,
        ctx,
        (item): item is string =>
          typeof item === 'string' &&
          item.length > 0 &&
          item.length <= POLICY_BOUNDS.stringValueLengthMax,
        `strings of 1 to ${POLICY_BOUNDS.stringValueLengthMax} characters`,
      );
  }
}

function checkList(
  raw: unknown,
  path: readonly PathKey[],
  ctx: CheckContext,
  isItem: (item: unknown) => item is string,
  what: string,
): readonly string[] {
  if (!Array.isArray(raw))
    throw policyError(path, `must be a list of ${what}, not ${givenWords(raw)}`);
  if (raw.length === 0) throw policyError(path, `must be a non-empty list of ${what}`);
  const list: readonly unknown[] = raw;
  spendListValues(list.length, path, ctx);
  const bad = list.findIndex((item) => !isItem(item));
  if (bad !== -1) throw policyError([...path, bad], `must be one of ${what}`);
  const items = list.filter(isItem);
  // Policy text that a template stores as it is: plain, in a fast compile (codes always are).
  for (const item of items) requirePlainText(ctx, item);
  return items;
}

function substituteParams(
  node: unknown,
  values: ReadonlyMap<string, ParamValue>,
  depth: number,
): unknown {
  if (depth > SUBSTITUTION_DEPTH_MAX)
    throw policyError([], 'uses a template that nests too deeply');
  if (Array.isArray(node))
    return node.map((item: unknown) => substituteParams(item, values, depth + 1));
  if (!isPlainObject(node)) return node;
  const keys = Object.keys(node);
  if (keys.length === 1 && keys[0] === 'param' && typeof node.param === 'string') {
    // The library's own tests prove every placeholder names a declared parameter.
    return values.get(node.param);
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = substituteParams(node[key], values, depth + 1);
  return out;
}

function interpolate(message: string, values: ReadonlyMap<string, ParamValue>): string {
  return message.replace(/\{([a-z][A-Za-z0-9]*)\}/g, (whole, name: string) => {
    const value = values.get(name);
    if (value === undefined) return whole;
    return Array.isArray(value) ? value.join(', ') : String(value);
  });
}
