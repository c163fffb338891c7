import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * What `npm pack` (and so an install from git or a tarball) ships. The package's entry points
 * are compiled files, so a package without dist/ does not load: `prepare` builds it, and npm
 * runs `prepare` before packing and after a git install. The dry run is made with scripts off
 * so that this test never rewrites the dist/ other tests run; the dist/ it lists is the one the
 * clone's own `npm ci` (that same `prepare`) built.
 */
const root = new URL('..', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
  main: string;
  exports: Record<string, { default: string; types: string }>;
};

describe('the package', () => {
  it('builds dist/ before it is packed or installed from git', () => {
    expect(manifest.scripts['prepare']).toBe('npm run build');
  });

  it('ships every entry point, the migrations and the rule library', () => {
    const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = new Set(
      (JSON.parse(output) as [{ files: { path: string }[] }])[0].files.map((file) => file.path),
    );
    const entries = [
      manifest.main,
      ...Object.values(manifest.bin),
      ...Object.values(manifest.exports).flatMap((entry) => [entry.default, entry.types]),
    ].map((path) => path.replace(/^\.\//, ''));
    for (const entry of entries)
      expect({ entry, shipped: files.has(entry) }).toEqual({ entry, shipped: true });
    expect(files.has('dist/store/migrations/0001_init.sql')).toBe(true);
    expect([...files].some((path) => /^rules\/[a-z-]+\.json$/.test(path))).toBe(true);
    // Sources and tests stay out of the package.
    expect([...files].filter((path) => /^(src|test|bench)\//.test(path))).toEqual([]);
  });
});
