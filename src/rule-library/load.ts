import { readdirSync, readFileSync } from 'node:fs';
import { parseWith } from '../core/policy/parse-with.js';
import {
  SpendgateError,
  templateSchema,
  type TemplateDocument,
  type TemplateLibrary,
} from '../core/index.js';

/** rules/ at the package root, both from src/ (tsx, vitest) and from dist/ (built). */
export const BUILTIN_RULES_DIR = new URL('../../rules/', import.meta.url);

/** Files the loader reads at most; the library is a curated folder, not user input. */
const TEMPLATE_FILES_MAX = 200;

/**
 * Loads the rule library: every `*.json` in a folder, each one template validated against the
 * template format of the core. A malformed file stops the load with a message naming the file,
 * so a broken library never reaches a running service.
 */
export function loadRuleLibrary(dir: URL = BUILTIN_RULES_DIR): TemplateLibrary {
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length > TEMPLATE_FILES_MAX) {
    throw new Error(`rule library ${dir.pathname} holds more than ${TEMPLATE_FILES_MAX} templates`);
  }
  const library = new Map<string, TemplateDocument>();
  for (const file of files) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    let template: TemplateDocument;
    try {
      template = parseWith(templateSchema, JSON.parse(text) as unknown, []);
    } catch (error) {
      // A refusal's message names the field by its last key; the path says where it is.
      const why =
        error instanceof SpendgateError && error.param !== undefined
          ? `${error.param}: ${error.message}`
          : error instanceof Error
            ? error.message
            : String(error);
      throw new Error(`rule library file ${file}: ${why}`, { cause: error });
    }
    if (`${template.name}.json` !== file) {
      throw new Error(
        `rule library file ${file} holds template "${template.name}"; name the file after it`,
      );
    }
    library.set(template.name, Object.freeze(template));
  }
  return library;
}

let builtin: TemplateLibrary | undefined;

/** The templates shipped in rules/, loaded once on first use. */
export function builtinRuleLibrary(): TemplateLibrary {
  builtin ??= loadRuleLibrary();
  return builtin;
}
