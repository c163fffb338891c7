import {
  compilePolicy as compileWithLibrary,
  withDefaultTemplates,
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
  // The core checks the options, whatever their type, and refuses them by name.
  return compileWithLibrary(
    input,
    withDefaultTemplates(options, builtinRuleLibrary) as CompileOptions,
  );
}
