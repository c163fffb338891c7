#!/usr/bin/env node
// `npm run pack:client [-- <destination folder>]`: packs @spendgate/client, the typed client of
// spendgate's REST interface (src/client: openapi-fetch over the types `npm run openapi` writes
// from docs/openapi.json), as a tarball a program installs beside, or instead of, the service.
// It depends on openapi-fetch alone, at the version package.json pins. Built in a temporary
// folder, as scripts/pack-core.mjs builds the core, so packing changes nothing in the clone.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { compile, pack, ROOT, rootManifest } from './pack-core.mjs';

const CLIENT_DEPENDENCIES = ['openapi-fetch'];

/** Builds @spendgate/client into `stageDir` (an empty folder): ready for `npm pack`. */
export function stageClient(stageDir) {
  const manifest = rootManifest();
  const distDir = join(stageDir, 'dist');
  compile(stageDir, {
    extends: join(ROOT, 'tsconfig.build.json'),
    compilerOptions: {
      rootDir: join(ROOT, 'src', 'client'),
      outDir: distDir,
      sourceMap: false,
      typeRoots: [join(ROOT, 'node_modules', '@types')],
    },
    include: [join(ROOT, 'src', 'client')],
  });
  // The staged code may import its own files and openapi-fetch, nothing of the service.
  for (const file of readdirSync(distDir)) {
    const text = readFileSync(join(distDir, file), 'utf8');
    for (const [, specifier] of text.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
      if (!specifier.startsWith('./') && !CLIENT_DEPENDENCIES.includes(specifier)) {
        throw new Error(`@spendgate/client: ${file} imports ${specifier}`);
      }
    }
  }
  cpSync(join(ROOT, 'src', 'client', 'README.md'), join(stageDir, 'README.md'));
  const dependencies = Object.fromEntries(
    CLIENT_DEPENDENCIES.map((name) => {
      const version = manifest.dependencies[name];
      if (version === undefined) throw new Error(`package.json does not depend on ${name}`);
      return [name, version];
    }),
  );
  const clientManifest = {
    name: '@spendgate/client',
    version: manifest.version,
    description:
      "A typed client of spendgate's REST interface: every path, parameter, body and answer checked at compile time.",
    license: manifest.license,
    type: 'module',
    engines: manifest.engines,
    sideEffects: false,
    main: './dist/index.js',
    types: './dist/index.d.ts',
    // `default`, not `import`: require() of this ES module works too (Node 20.19 and later).
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    files: ['dist'],
    dependencies,
  };
  writeFileSync(join(stageDir, 'package.json'), `${JSON.stringify(clientManifest, null, 2)}\n`);
  return stageDir;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const destination = resolve(process.argv[2] ?? process.cwd());
  const stageDir = mkdtempSync(join(tmpdir(), 'spendgate-client-'));
  try {
    process.stdout.write(`${pack(stageClient(stageDir), destination)}\n`);
  } finally {
    rmSync(stageDir, { recursive: true, force: true });
  }
}
