import { givenWords } from '../errors/given.js';
import { SpendgateError } from '../errors/spendgate-error.js';
import { currencyInfoOf, type CurrencyCode, type CurrencyInfo } from '../money/currencies.js';
import { parseWith } from './parse-with.js';
import {
  EMPTY_TEMPLATE_LIBRARY,
  templateSchema,
  type TemplateDocument,
  type TemplateLibrary,
} from './template-schema.js';

export interface CompileOptions {
  /** The vault's currency: money constants are parsed with its scale. Default USDC. */
  readonly currency?: CurrencyCode | CurrencyInfo | undefined;
  /**
   * Templates the policy may name. The core's default is none; the library entries
   * (`spendgate`, `@spendgate/core`) default to the built-in rules/ library.
   */
  readonly templates?: TemplateLibrary | undefined;
}

/** Options read and checked: what the compile steps use. */
export interface CompileSettings {
  readonly currency: CurrencyInfo;
  readonly templates: TemplateLibrary;
}

/** Without options a policy is compiled for USDC, the first currency of the registry. */
export const DEFAULT_CURRENCY: CurrencyCode = 'USDC';

const DEFAULT_SETTINGS: CompileSettings = Object.freeze({
  currency: currencyInfoOf(DEFAULT_CURRENCY),
  templates: EMPTY_TEMPLATE_LIBRARY,
});

/** Templates a library may hold: far above the built-in library's, below any runaway. */
const LIBRARY_TEMPLATES_MAX = 1_000;

/**
 * Libraries already checked, each with its templates as the template schema reads them
 * (defaults applied). A caller's Map is checked once, the first time a compile meets it; the
 * copy is what compiles read, so a later change to the caller's Map is not seen.
 */
const CHECKED_LIBRARIES = new WeakMap<TemplateLibrary, TemplateLibrary>();

/**
 * `compilePolicy`'s options, defaulted and checked. A fault is a SpendgateError at
 * `options.<field>`: `invalid_currency` for the currency, `parameter_invalid` otherwise.
 */
export function readCompileOptions(options: unknown): CompileSettings {
  if (options === undefined) return DEFAULT_SETTINGS;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SpendgateError(
      'parameter_invalid',
      `options must be an object such as { currency: 'USDC' }, not ${givenWords(options)}.`,
      'options',
    );
  }
  const { currency, templates } = options as Readonly<Record<string, unknown>>;
  return {
    currency:
      currency === undefined
        ? DEFAULT_SETTINGS.currency
        : currencyInfoOf(currency, 'options.currency'),
    templates: templates === undefined ? EMPTY_TEMPLATE_LIBRARY : checkedLibrary(templates),
  };
}

function checkedLibrary(templates: unknown): TemplateLibrary {
  if (!(templates instanceof Map)) {
    throw new SpendgateError(
      'parameter_invalid',
      `templates must be a Map of template names to templates, not ${givenWords(templates)}.`,
      'options.templates',
    );
  }
  const library = templates as TemplateLibrary;
  const known = CHECKED_LIBRARIES.get(library);
  if (known !== undefined) return known;
  if (library.size > LIBRARY_TEMPLATES_MAX) {
    throw new SpendgateError(
      'parameter_invalid',
      `templates holds more than ${LIBRARY_TEMPLATES_MAX} templates.`,
      'options.templates',
    );
  }
  const checked = new Map<string, TemplateDocument>();
  for (const [name, template] of library as ReadonlyMap<unknown, unknown>) {
    const key = checkedTemplate(name, template);
    checked.set(key, Object.freeze(checkedTemplateDocument(key, template)));
  }
  CHECKED_LIBRARIES.set(library, checked);
  return checked;
}

function checkedTemplate(name: unknown, template: unknown): string {
  const named =
    typeof template === 'object' && template !== null
      ? (template as { name?: unknown }).name
      : undefined;
  if (typeof name !== 'string' || name !== named) {
    throw new SpendgateError(
      'parameter_invalid',
      'templates must hold each template under its own name.',
      'options.templates',
    );
  }
  return name;
}

function checkedTemplateDocument(name: string, template: unknown): TemplateDocument {
  try {
    return parseWith(templateSchema, template, []);
  } catch (error) {
    if (!(error instanceof SpendgateError)) throw error;
    const where = error.param === undefined || error.param === 'policy' ? '' : ` at ${error.param}`;
    throw new SpendgateError(
      'parameter_invalid',
      `templates holds an invalid template ${JSON.stringify(name.slice(0, 64))}${where}: ${error.message}`,
      'options.templates',
    );
  }
}

/**
 * `options` with `templates` defaulting to `library()`: what each package entry (`spendgate`,
 * `@spendgate/core`) compiles with, so that both default to the built-in rules/ library.
 * Options of another type than an object are handed on untouched, for `compilePolicy` to
 * refuse them by name.
 */
export function withDefaultTemplates(options: unknown, library: () => TemplateLibrary): unknown {
  if (options === undefined) return { templates: library() };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return options;
  const given = options as CompileOptions;
  return given.templates === undefined ? { ...given, templates: library() } : given;
}
