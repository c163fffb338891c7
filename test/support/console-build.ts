import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_ROOT } from '../../src/http/console.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VITE = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url));

/** The newest time of a file or folder under console/ (a few dozen files: bounded walk). */
function newestSourceMs(): number {
  const folders = [fileURLToPath(new URL('../../console/', import.meta.url))];
  let newest = 0;
  for (let seen = 0; folders.length > 0 && seen < 1_000; seen += 1) {
    const folder = folders.pop() as string;
    newest = Math.max(newest, statSync(folder).mtimeMs);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(path);
      else newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

/**
 * The console's build (dist/console), made here when missing or older than console/: CI
 * builds before the tests (`npm run build`), a fresh checkout may not have, and a stale build
 * would test other code than the sources. Only the console's part of the build.
 */
export function ensureConsoleBuilt(): void {
  const page = `${CONSOLE_ROOT}/index.html`;
  if (existsSync(page) && statSync(page).mtimeMs >= newestSourceMs()) return;
  const result = spawnSync(
    process.execPath,
    [VITE, 'build', '--config', 'console/vite.config.ts'],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  if (result.status !== 0 || !existsSync(`${CONSOLE_ROOT}/index.html`)) {
    throw new Error(`The console's build failed:\n${result.stderr}`);
  }
}
