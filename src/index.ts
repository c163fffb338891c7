import {
  compilePolicy as compileWithLibrary,
  type CompiledPolicy,
  type CompileOptions,
} from './core/index.js';
import { builtinRuleLibrary } from './rule-library/load.js';

/*
 * The library entry: `import { compilePolicy, decide, parseAmount } from 'spendgate'`.
 * Everything of the pure core, with `compilePolicy` defaulting to the built-in rule library.
 */

export * from './core/index.js';
export { builtinRuleLibrary, loadRuleLibrary } from './rule-library/load.js';

/**
 * Compiles a vault's policy. Templates resolve against the built-in library in rules/ unless
 * `options.templates` names another; the currency defaults to USDC.
 */
export function compilePolicy(input: unknown, options?: CompileOptions): CompiledPolicy {
  return compileWithLibrary(input, withBuiltinTemplates(options));
}

/** The options with the built-in library as the default; anything but an object as it is. */
function withBuiltinTemplates(options: unknown): CompileOptions {
  if (options === undefined) return { templates: builtinRuleLibrary() };
  // The core refuses options of another type, naming them; they are passed on untouched.
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return options as CompileOptions;
  }
  const given = options as CompileOptions;
  return { ...given, templates: given.templates ?? builtinRuleLibrary() };
}
