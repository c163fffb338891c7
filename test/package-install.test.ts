import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, stageCore, stageMain } from '../scripts/pack-core.mjs';

/**
 * Both packages as an embedding user meets them: packed (`npm pack`), installed from the
 * tarball into an empty project, imported by name. `@spendgate/core` must install with zod and
 * decimal.js alone, and `spendgate` must keep `import { compilePolicy, decide } from
 * 'spendgate'`; each compiles a policy and decides with string and number amounts, in
 * JavaScript and in type-checked TypeScript, as an ES module and through `require()`; and every
 * example README.md and docs/library.md show runs, as copied, against either package. Installs
 * come from npm's cache when it has the packages (`--prefer-offline`) and scripts are off, as
 * nothing here needs them.
 */
const run = promisify(execFile);
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const INSTALL_TIMEOUT_MS = 150_000;
const TSC_OPTIONS = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'];
// Compiled to run: the same checks, emitted into out/. The examples use node:assert, so Node's
// types come in as a TypeScript project on Node has them (@types/node; ours, not installed into
// the project, whose node_modules the first test counts).
const NODE_TYPES = join(dirname(TSC), '..', '..', '@types');
const TSC_EMIT_OPTIONS = [
  ...TSC_OPTIONS.slice(1),
  ...['--skipLibCheck', '--typeRoots', NODE_TYPES, '--types', 'node', '--outDir', 'out'],
];
const PACKAGE_NAMES = { core: '@spendgate/core', main: 'spendgate' } as const;

/** The examples README.md and docs/library.md show, by their file, as the documents show them. */
const DOCUMENTED_EXAMPLES = ['README.md', 'docs/library.md'].flatMap((document) => [
  ...readFileSync(new URL(`../${document}`, import.meta.url), 'utf8').matchAll(
    /<!-- example: docs\/examples\/([a-z-]+)\.ts -->\n+```ts\n([\s\S]*?)```/g,
  ),
]);

const stages = { core: stageCore, main: stageMain };

const work = mkdtempSync(join(tmpdir(), 'spendgate-install-'));
const projects = { core: join(work, 'core-project'), main: join(work, 'main-project') };
const tarballs: Record<keyof typeof projects, string> = { core: '', main: '' };

/** An empty ES module project with one package installed from its tarball. */
async function installInto(project: string, tarball: string): Promise<void> {
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'embedder', version: '1.0.0', private: true, type: 'module' }),
  );
  await run(
    'npm',
    ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
    { cwd: project, timeout: INSTALL_TIMEOUT_MS },
  );
}

/** What an embedding user writes: compile a policy, decide with a string and a number. */
function embedding(from: string): string {
  return `import { compilePolicy, decide, evaluate, SpendgateError } from '${from}';

const policy = compilePolicy({
  limits: [{ interval: 'daily', amount: '100' }],
  templates: [{ name: 'block-gambling' }],
});
const input = (amount, spent) => ({
  card: { id: 'card_1', vaultId: 'vlt_1', status: 'active' },
  vault: { id: 'vlt_1', status: 'active', currency: 'USDC', available: '500' },
  policy,
  spend: { 'amount:daily': spent },
  nowMs: Date.parse('2026-11-18T10:00:00Z'),
  request: {
    cardId: 'card_1',
    amount,
    currency: 'USDC',
    merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
  },
});
let refusal = null;
try {
  decide(input('-5', '0'));
} catch (error) {
  refusal = error instanceof SpendgateError ? [error.name, error.code, error.param] : String(error);
}
console.log(
  JSON.stringify({
    fromString: decide(input('12.50', '87.5')).approved,
    fromNumber: decide(input(12.51, 87.5)).declineReason?.rule ?? null,
    gambling: evaluate(policy, {
      amount: 1,
      merchant: { name: 'Casino', mcc: '7995', country: 'US' },
      spent: { 'amount:daily': 0 },
      at: '2026-11-18T10:00:00Z',
    }).declineReason?.rule ?? null,
    refusal,
  }),
);
`;
}

const EXPECTED = {
  fromString: true,
  fromNumber: 'limits[0]',
  gambling: 'block-gambling',
  refusal: ['SpendgateError', 'invalid_amount', 'request.amount'],
};

/** The embedding as a CommonJS module: the same calls through `require()`. */
function requiredEmbedding(from: string): string {
  const esm = embedding(from);
  const cjs = esm.replace(
    /^import \{ ([^}]+) \} from '([^']+)';/,
    (_line, names: string, specifier: string) => `const { ${names} } = require('${specifier}');`,
  );
  expect(cjs).not.toBe(esm);
  return cjs;
}

/** An example as a user of `name` copies it: the other package's name swapped for `name`. */
function exampleFor(block: string, name: string): string {
  const other = Object.values(PACKAGE_NAMES).filter((candidate) => candidate !== name);
  let text = block;
  for (const specifier of other) text = text.replaceAll(`from '${specifier}'`, `from '${name}'`);
  expect(text).toContain(`from '${name}'`);
  return text;
}

/** Type-checks and compiles `file` in `project`, then runs what it became. */
async function compileAndRun(project: string, file: string): Promise<string> {
  await run(process.execPath, [TSC, ...TSC_EMIT_OPTIONS, file], { cwd: project }).catch(
    (error: unknown) => {
      // tsc says what it refused on stdout; the failure names it.
      const said = (error as { stdout?: unknown }).stdout;
      throw new Error(`tsc refused ${file}:\n${typeof said === 'string' ? said : ''}`, {
        cause: error,
      });
    },
  );
  const emitted = join('out', file.replace(/\.ts$/, '.js').replace(/\.cts$/, '.cjs'));
  return (await run(process.execPath, [emitted], { cwd: project })).stdout;
}

/** The same in TypeScript, checked against the package's declarations. */
function typedEmbedding(from: string): string {
  return `import { compilePolicy, decide, type Decision } from '${from}';
// Held in variables, so TypeScript widens each status to string: taken without \`as const\`.
const card = { id: 'c', vaultId: 'v', status: 'frozen' };
const vault = { id: 'v', status: 'active', currency: 'SOL', available: '10' };
const decision: Decision = decide({
  card,
  vault,
  policy: compilePolicy({ rules: [] }, { currency: 'SOL' }),
  at: 0,
  request: { cardId: 'c', amount: '1.5', currency: 'SOL', merchant: { name: 'n', mcc: '5812', country: 'US' } },
});
export const approved: boolean = decision.approved;
`;
}

/** The TypeScript embedding as a CommonJS module (`.cts`): it compiles to `require()`. */
function typedRequiredEmbedding(from: string): string {
  return `${typedEmbedding(from)}console.log(JSON.stringify({ approved }));\n`;
}

/** What each package gets from every form: ESM and CommonJS, JS and TS, every example. */
function describeForms(name: keyof typeof projects): void {
  const from = PACKAGE_NAMES[name];
  const project = () => projects[name];

  it('is required from a CommonJS module with the same calls and results', async () => {
    writeFileSync(join(project(), 'embed.cjs'), requiredEmbedding(from));
    const { stdout } = await run(process.execPath, ['embed.cjs'], { cwd: project() });
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it('is imported by a TypeScript CommonJS module (.cts), type-checked', async () => {
    writeFileSync(join(project(), 'embed-required.cts'), typedRequiredEmbedding(from));
    const stdout = await compileAndRun(project(), 'embed-required.cts');
    // A frozen card: declined, and the module ran to the end.
    expect(JSON.parse(stdout)).toEqual({ approved: false });
  });

  it.each(DOCUMENTED_EXAMPLES.map((match) => [match[1] as string, match[2] as string]))(
    'runs the documented example docs/examples/%s.ts as copied',
    async (example, block) => {
      const file = `documented-${example}.ts`;
      writeFileSync(join(project(), file), exampleFor(block, from));
      // Each example asserts its own results with node:assert: a wrong claim fails the run.
      await compileAndRun(project(), file);
    },
  );
}

beforeAll(async () => {
  for (const name of ['core', 'main'] as const) {
    const stageDir = mkdtempSync(join(work, `${name}-stage-`));
    tarballs[name] = pack(stages[name](stageDir), join(work, 'tarballs'));
  }
  await Promise.all([
    installInto(projects.core, tarballs.core),
    installInto(projects.main, tarballs.main),
  ]);
}, 2 * INSTALL_TIMEOUT_MS);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('@spendgate/core, installed from its tarball', () => {
  it('brings zod and decimal.js and nothing else', () => {
    const installed = readdirSync(join(projects.core, 'node_modules')).filter(
      (entry) => !entry.startsWith('.'),
    );
    expect(installed.sort()).toEqual(['@spendgate', 'decimal.js', 'zod']);
    const manifest = JSON.parse(
      readFileSync(join(projects.core, 'node_modules/@spendgate/core/package.json'), 'utf8'),
    ) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['decimal.js', 'zod']);
  });

  it('compiles a policy with a built-in template and decides with string and number amounts', async () => {
    writeFileSync(join(projects.core, 'embed.mjs'), embedding('@spendgate/core'));
    const { stdout } = await run(process.execPath, ['embed.mjs'], { cwd: projects.core });
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it('runs the one-line example of its README, as the package ships it', async () => {
    const readme = readFileSync(
      join(projects.core, 'node_modules/@spendgate/core/README.md'),
      'utf8',
    );
    const example = /<!-- example:[^>]*-->\n+```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from '@spendgate/core'");
    writeFileSync(join(projects.core, 'readme-example.mjs'), example ?? '');
    // The example asserts its own result with node:assert: a wrong claim fails the run.
    await run(process.execPath, ['readme-example.mjs'], { cwd: projects.core });
  });

  it('type-checks against its declarations', async () => {
    writeFileSync(join(projects.core, 'embed.ts'), typedEmbedding('@spendgate/core'));
    await run(process.execPath, [TSC, ...TSC_OPTIONS, 'embed.ts'], { cwd: projects.core });
  });

  describeForms('core');
});

describe('spendgate, installed from its tarball', () => {
  it('keeps import { compilePolicy, decide } from "spendgate", with string and number amounts', async () => {
    writeFileSync(join(projects.main, 'embed.mjs'), embedding('spendgate'));
    const { stdout } = await run(process.execPath, ['embed.mjs'], { cwd: projects.main });
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it('type-checks against its declarations', async () => {
    writeFileSync(join(projects.main, 'embed.ts'), typedEmbedding('spendgate'));
    await run(
      process.execPath,
      // The service's own dependencies' declarations are theirs to check, not this test's.
      [TSC, ...TSC_OPTIONS, '--skipLibCheck', 'embed.ts'],
      { cwd: projects.main },
    );
  });

  describeForms('main');
});
