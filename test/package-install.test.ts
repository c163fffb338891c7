import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, stageCore, stageMain } from '../scripts/pack-core.mjs';

/**
 * Both packages as an embedding user meets them: packed (`npm pack`), installed from the
 * tarball into an empty project, imported by name. `@spendgate/core` must install with zod and
 * decimal.js alone, and `spendgate` must keep `import { compilePolicy, decide } from
 * 'spendgate'`; each compiles a policy and decides with string and number amounts, in
 * JavaScript and in type-checked TypeScript. Installs come from npm's cache when it has the
 * packages (`--prefer-offline`) and scripts are off, as nothing here needs them.
 */
const run = promisify(execFile);
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const INSTALL_TIMEOUT_MS = 150_000;
const TSC_OPTIONS = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'];

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

/** The same in TypeScript, checked against the package's declarations. */
function typedEmbedding(from: string): string {
  return `import { compilePolicy, decide, type Decision } from '${from}';
const decision: Decision = decide({
  card: null,
  vault: null,
  policy: compilePolicy({ rules: [] }, { currency: 'SOL' }),
  nowMs: 0,
  request: { cardId: 'c', amount: '1.5', currency: 'SOL', merchant: { name: 'n', mcc: '5812', country: 'US' } },
});
export const approved: boolean = decision.approved;
`;
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
});
