import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * `npm start`'s prestart (scripts/build-if-stale.mjs) in a package of the test's own, whose
 * `build` script counts its runs: it builds when there is no build, when a file under src/ is
 * newer than the build, when a file is deleted from src/, when package.json changes and when a
 * console source changes, and
 * otherwise starts without one, saying which on stderr; a failed build stops the start.
 */
const SCRIPT = new URL('../scripts/build-if-stale.mjs', import.meta.url).pathname;

function project(): string {
  const root = mkdtempSync(join(tmpdir(), 'spendgate-prestart-'));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export {};\n');
  writeFileSync(join(root, 'src', 'cli', 'other.ts'), 'export {};\n');
  mkdirSync(join(root, 'console', 'src'), { recursive: true });
  writeFileSync(join(root, 'console', 'src', 'main.tsx'), 'export {};\n');
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  writeBuildScript(root, 'process.exitCode = 0');
  return root;
}

/** A `build` that writes dist/cli/main.js and counts its runs in builds.txt, then runs `tail`. */
function writeBuildScript(root: string, tail: string): void {
  const build = [
    "const fs = require('node:fs')",
    "fs.mkdirSync('dist/cli', { recursive: true })",
    "fs.writeFileSync('dist/cli/main.js', '')",
    "fs.appendFileSync('builds.txt', 'x')",
    tail,
  ].join('; ');
  writeFileSync(
    join(root, 'package.json'),
    `${JSON.stringify({ name: 'prestart-test', private: true, scripts: { build: `node -e "${build}"` } })}\n`,
  );
}

function prestart(root: string): { status: number | null; said: string; builds: number } {
  const result = spawnSync(process.execPath, [SCRIPT], { cwd: root, encoding: 'utf8' });
  const countFile = join(root, 'builds.txt');
  const builds = existsSync(countFile) ? readFileSync(countFile, 'utf8').length : 0;
  const said = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('spendgate: '))
    .join('\n');
  return { status: result.status, said, builds };
}

/** Sets a file's time to now, as an edit made after the last build (which took far longer). */
function touchLater(path: string): void {
  const now = new Date();
  utimesSync(path, now, now);
}

describe('scripts/build-if-stale.mjs (npm start)', () => {
  it('builds only what changed since the last build, and says which', () => {
    const root = project();
    const first = prestart(root);
    expect(first).toMatchObject({ status: 0, builds: 1 });
    expect(first.said).toContain('spendgate: no build in dist/ yet: building dist/');
    expect(first.said).toMatch(/spendgate: built in [0-9.]+ s/);

    expect(prestart(root)).toEqual({
      status: 0,
      said: 'spendgate: dist/ is current with src/ and console/: no build needed',
      builds: 1,
    });

    touchLater(join(root, 'src', 'cli', 'main.ts'));
    const edited = prestart(root);
    expect(edited).toMatchObject({ status: 0, builds: 2 });
    expect(edited.said).toContain('src/cli/main.ts changed since the last build');
    expect(prestart(root).builds).toBe(2);

    // A deleted file shows in its folder's time, which the walk reads too.
    rmSync(join(root, 'src', 'cli', 'other.ts'));
    touchLater(join(root, 'src', 'cli'));
    expect(prestart(root)).toMatchObject({ status: 0, builds: 3 });

    touchLater(join(root, 'package.json'));
    const manifest = prestart(root);
    expect(manifest).toMatchObject({ status: 0, builds: 4 });
    expect(manifest.said).toContain('package.json changed since the last build');

    // The console's sources are built by the same `npm run build` (Vite, into dist/console).
    touchLater(join(root, 'console', 'src', 'main.tsx'));
    const consoleEdit = prestart(root);
    expect(consoleEdit).toMatchObject({ status: 0, builds: 5 });
    expect(consoleEdit.said).toContain('console/src/main.tsx changed since the last build');
    expect(prestart(root).builds).toBe(5);
  });

  it('stops the start when the build fails', () => {
    const root = project();
    writeBuildScript(root, 'process.exit(3)');
    const failed = prestart(root);
    expect(failed.status).toBe(3);
    expect(failed.said).toContain('spendgate: the build failed (above); dist/ is not started');
  });
});
