import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../src/config/env.js';
import { builtinRuleLibrary } from '../src/rule-library/load.js';

/** README.md stays true: its example is the file that runs here, its lists match the code. */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README.md', () => {
  it('shows docs/examples/library.ts verbatim, and that example runs', async () => {
    const example = readFileSync(new URL('../docs/examples/library.ts', import.meta.url), 'utf8');
    const block = /<!-- example: docs\/examples\/library\.ts -->\n+```ts\n([\s\S]*?)```/.exec(
      readme,
    );
    expect(block?.[1]).toBe(example);
    // The example asserts its own results with node:assert; a wrong claim throws here.
    await expect(import('../docs/examples/library.js')).resolves.toBeDefined();
  });

  it('lists every template of the rule library', () => {
    for (const name of builtinRuleLibrary().keys()) {
      expect(readme).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'));
    }
  });

  it('documents every setting the service reads', () => {
    // SPENDGATE_MASTER_KEY is read by the store's key loader, the rest by the config schema.
    for (const name of [...SETTING_NAMES, 'SPENDGATE_MASTER_KEY']) {
      expect(readme, name).toContain(`\`${name}\``);
    }
  });

  it('names the test command that .ci/run calls', () => {
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    expect(readme).toContain('npm test');
    expect(ci).toContain('npm test');
  });
});
