import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../src/config/env.js';
import { builtinRuleLibrary } from '../src/rule-library/load.js';

/**
 * README.md and docs/library.md stay true: their examples are the files that run here, their
 * lists match the code.
 */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const library = readFileSync(new URL('../docs/library.md', import.meta.url), 'utf8');

describe('README.md', () => {
  const examples = [
    ...`${readme}\n${library}`.matchAll(
      /<!-- example: (docs\/examples\/[a-z-]+)\.ts -->\n+```ts\n([\s\S]*?)```/g,
    ),
  ];

  // Imports the bundler can see: one per example.
  const RUNS: Record<string, () => Promise<unknown>> = {
    'docs/examples/embed': () => import('../docs/examples/embed.js'),
    'docs/examples/library': () => import('../docs/examples/library.js'),
  };

  it('shows the library examples, the one-line embedding among them', () => {
    expect(examples.map((match) => match[1])).toEqual([
      'docs/examples/embed',
      'docs/examples/library',
    ]);
  });

  it.each(examples.map((match) => [match[1] as string, match[2] as string]))(
    'shows %s.ts verbatim, and that example runs',
    async (path, block) => {
      const example = readFileSync(new URL(`../${path}.ts`, import.meta.url), 'utf8');
      expect(block).toBe(example);
      // Each example asserts its own results with node:assert; a wrong claim throws here.
      await expect(RUNS[path]?.()).resolves.toBeDefined();
    },
  );

  it('lists every template of the rule library (docs/library.md)', () => {
    for (const name of builtinRuleLibrary().keys()) {
      expect(library).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'));
    }
  });

  it('sends to the settings page, which test/settings-doc.test.ts keeps whole', () => {
    expect(readme).toContain('[docs/settings.md](docs/settings.md)');
  });

  it('says what is built and what is not, as the code has it', () => {
    const status = /\*\*Status\.\*\*([\s\S]*?)\n\n/.exec(readme)?.[1] ?? '';
    expect(status.length).toBeGreaterThan(200);
    // The product as it is: no issue numbers, no "to come" for what the routes already serve.
    expect(status).not.toMatch(/#\d|\bissue\b|to come/i);
    // What is said to be missing is missing, and what is said to be there is there: the
    // routes and settings the paragraph names, split at "Not built yet" when it has one.
    const split = status.includes('Not built yet')
      ? status.indexOf('Not built yet')
      : status.length;
    const document = JSON.parse(
      readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8'),
    ) as { paths: Record<string, unknown> };
    const named = (text: string) => ({
      paths: [...text.matchAll(/`(\/v1\/[^`]+)`/g)].map((match) => match[1] as string),
      settings: [...text.matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1] as string),
    });
    const built = named(status.slice(0, split));
    const notBuilt = named(status.slice(split));
    expect(
      built.settings.length + notBuilt.paths.length + notBuilt.settings.length,
    ).toBeGreaterThan(0);
    for (const path of notBuilt.paths)
      expect(Object.keys(document.paths), path).not.toContain(path);
    for (const name of notBuilt.settings) expect(SETTING_NAMES, name).not.toContain(name);
    for (const path of built.paths) expect(Object.keys(document.paths), path).toContain(path);
    for (const name of built.settings) expect(SETTING_NAMES, name).toContain(name);
    // And what it says is served, is.
    for (const path of ['/v1/cards', '/v1/authorizations', '/v1/webhooks', '/v1/settlements']) {
      expect(Object.keys(document.paths)).toContain(path);
    }
  });

  it('names the test command that .ci/run calls', () => {
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    expect(readme).toContain('npm test');
    expect(ci).toContain('npm test');
  });
});
