import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack } from '../scripts/pack-core.mjs';
import { stageClient } from '../scripts/pack-client.mjs';
import { startTestService, type TestService } from './support/http.js';

/**
 * @spendgate/client as a program meets it (issue 39, part 4): packed (`npm run pack:client`),
 * installed from the tarball into an empty project with openapi-fetch alone, type-checked
 * against the OpenAPI document's types (a call the API does not have fails to compile), and
 * run against a real server: a vault made, read back, and a refusal read as the contract's
 * error body.
 */
const run = promisify(execFile);
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const INSTALL_TIMEOUT_MS = 150_000;
// DOM's lib for fetch, Request and Response, which openapi-fetch's types name; no @types/node.
const TSC_OPTIONS = [
  '--strict',
  '--target',
  'es2022',
  '--module',
  'nodenext',
  '--lib',
  'es2022,dom',
];

const work = mkdtempSync(join(tmpdir(), 'spendgate-client-'));
const project = join(work, 'project');
let service: TestService | undefined;
let key = '';

beforeAll(async () => {
  service = await startTestService();
  ({ key } = await service.key());
  const tarball = pack(stageClient(mkdtempSync(join(work, 'stage-'))), work);
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'client-user', version: '1.0.0', private: true, type: 'module' }),
  );
  await run(
    'npm',
    ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'],
    { cwd: project, timeout: INSTALL_TIMEOUT_MS },
  );
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await service?.close();
  rmSync(work, { recursive: true, force: true });
});

const PROGRAM = `import { createSpendgateClient, dataOf, SpendgateApiError } from '@spendgate/client';

declare const process: { env: Record<string, string | undefined> };

const client = createSpendgateClient({ baseUrl: process.env.BASE!, apiKey: process.env.KEY! });
const vault = dataOf(
  await client.POST('/v1/vaults', {
    body: { name: 'Ops', currency: 'USDC', network: 'solana', initialDeposit: '25.50' },
  }),
);
const again = dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id: vault.id } } }));
let refusal: string[] = [];
try {
  dataOf(await client.GET('/v1/vaults/{id}', { params: { path: { id: 'vlt_nothing' } } }));
} catch (error) {
  if (error instanceof SpendgateApiError) refusal = [String(error.status), error.body.code];
}
console.log(JSON.stringify({ id: again.id === vault.id, available: again.balance.available, refusal }));
`;

describe('@spendgate/client, installed from its tarball', () => {
  it('type-checks a program against the API, and runs it against a server', async () => {
    writeFileSync(join(project, 'program.ts'), PROGRAM);
    await run(process.execPath, [TSC, ...TSC_OPTIONS, 'program.ts'], { cwd: project });
    const output = await run(process.execPath, ['program.js'], {
      cwd: project,
      env: { ...process.env, BASE: service?.base ?? '', KEY: key },
    });
    expect(JSON.parse(output.stdout)).toEqual({
      id: true,
      available: '25.50',
      refusal: ['404', 'vault_not_found'],
    });
  });

  it('refuses at compile time a call the API does not have', async () => {
    writeFileSync(
      join(project, 'wrong.ts'),
      `import { createSpendgateClient } from '@spendgate/client';
const client = createSpendgateClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_test_x' });
await client.POST('/v1/vaults', { body: { name: 42, currency: 'USDC', network: 'solana' } });
await client.GET('/v1/no-such-route');
`,
    );
    const compiled = await run(process.execPath, [TSC, ...TSC_OPTIONS, '--noEmit', 'wrong.ts'], {
      cwd: project,
    }).then(
      () => '',
      (error: unknown) => String((error as { stdout?: string }).stdout ?? error),
    );
    expect(compiled).toContain('wrong.ts(3');
    expect(compiled).toContain('wrong.ts(4');
  });
});
