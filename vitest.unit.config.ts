import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/*
 * The fast loop (`npm run test:unit`): the tests that need no PostgreSQL, Redis, browser,
 * Solana runtime or child process. Chosen by what each test file imports, at each run, so a
 * new test joins the loop by itself and one that starts needing a service leaves it. `npm test`
 * remains the whole suite, and the only one CI runs.
 */
const NEEDS_A_SERVICE = new RegExp(
  [
    // Harnesses that open a database, a server, processes or a browser.
    String.raw`support/(databases|store|http|fleet|processes|chromium|console-build|metrics|pg-replica|redis-cluster|recorded-statements|receiver|authorize|chain-sends|deposits)\.js`,
    // The services' clients, and the runtimes.
    String.raw`from '(pg|ioredis|bullmq|node:child_process|playwright-core|solana-bankrun|@electric-sql/pglite)'`,
    String.raw`src/(local-chain|cli)/|src/redis\.js|src/store/sql/p|createPgliteClient|node:child_process`,
  ].join('|'),
);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

export const UNIT_TEST_FILES = testFiles('test').filter(
  (file) => !NEEDS_A_SERVICE.test(readFileSync(file, 'utf8')),
);

// The whole suite's settings, but these files; the differential test against json-rules-engine
// runs a fifth of its 10,000 cases here.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: UNIT_TEST_FILES,
    env: { ...base.test?.env, SPENDGATE_DIFFERENTIAL_CASES: '2000' },
  },
});
