#!/usr/bin/env node
// `npm run pack:core [-- <destination folder>]`: packs @spendgate/core, the pure core alone,
// as a tarball an embedding service installs without the service's dependencies (Solana,
// BullMQ, Fastify, PGlite: about 174 MB). It depends on zod and decimal.js only, at the
// versions package.json pins, and holds:
//
// - dist/: src/core compiled (ES modules and declarations), the same sources `spendgate`
//   builds, so `import { compilePolicy, decide } from 'spendgate'` and from '@spendgate/core'
//   are one library;
// - dist/builtin-rules.js: the templates of rules/ as data (the core reads no files), and
//   dist/package.js, the entry: the core with `compilePolicy` defaulting to those templates
//   and `builtinRuleLibrary()`, as the `spendgate` entry (src/index.ts) has them;
// - README.md (src/core/README.md) and rules/README.md (the conditions' differences from
//   json-rules-engine).
//
// The package is built in a fresh temporary folder, never in dist/, so packing it changes
// nothing the service or the tests run. Before packing, the staged code is checked to import
// nothing but its own files, zod and decimal.js. `stageMain` stages `spendgate` the same way,
// for test/package.test.ts to install both from tarballs. Plain Node: it runs before any build.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CORE_DEPENDENCIES = ['decimal.js', 'zod'];
// The staged core's files, at most: a runaway walk stops loudly.
const STAGED_FILES_MAX = 2_000;
// Templates the library may hold (src/rule-library/load.ts has the same bound).
const TEMPLATE_FILES_MAX = 200;

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

export function rootManifest() {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
}

/** Runs the TypeScript compiler with a config written for this build. */
export function compile(stageDir, config) {
  const configPath = join(stageDir, 'tsconfig.stage.json');
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  execFileSync(process.execPath, [TSC, '-p', configPath], { cwd: ROOT, stdio: 'inherit' });
}

/** The templates of rules/, parsed, in file order. */
function ruleTemplates() {
  const dir = join(ROOT, 'rules');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length > TEMPLATE_FILES_MAX) {
    throw new Error(`rules/ holds more than ${TEMPLATE_FILES_MAX} templates`);
  }
  return files.map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')));
}

const ENTRY_JS = `// The @spendgate/core entry: the core, with compilePolicy defaulting to rules/ (scripts/pack-core.mjs).
import { compilePolicy as compileWithLibrary, withDefaultTemplates } from './index.js';
import { BUILTIN_TEMPLATES } from './builtin-rules.js';

export * from './index.js';

let builtin;

/** The templates of spendgate's rules/ folder, by name; checked the first time a policy uses them. */
export function builtinRuleLibrary() {
  builtin ??= new Map(BUILTIN_TEMPLATES.map((template) => [template.name, template]));
  return builtin;
}

/** Compiles a policy; templates default to builtinRuleLibrary(), the currency to USDC. */
export function compilePolicy(input, options) {
  return compileWithLibrary(input, withDefaultTemplates(options, builtinRuleLibrary));
}
`;

const ENTRY_DTS = `import type { CompiledPolicy, CompileOptions, TemplateLibrary } from './index.js';
export * from './index.js';
/** The templates of spendgate's rules/ folder, by name. */
export declare function builtinRuleLibrary(): TemplateLibrary;
/** Compiles a policy; templates default to builtinRuleLibrary(), the currency to USDC. */
export declare function compilePolicy(input: unknown, options?: CompileOptions): CompiledPolicy;
`;

/** Every file below `dir`, relative paths. */
function filesBelow(dir, prefix = '', found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(prefix, entry.name);
    if (entry.isDirectory()) filesBelow(join(dir, entry.name), path, found);
    else found.push(path);
    if (found.length > STAGED_FILES_MAX) throw new Error(`more than ${STAGED_FILES_MAX} files`);
  }
  return found;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Refuses a staged core that imports anything but its own files, zod and decimal.js. */
function checkImports(distDir) {
  for (const file of filesBelow(distDir).filter((path) => /\.(js|d\.ts)$/.test(path))) {
    const text = readFileSync(join(distDir, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2];
      if (
        !specifier.startsWith('./') &&
        !specifier.startsWith('../') &&
        !CORE_DEPENDENCIES.includes(specifier)
      ) {
        throw new Error(
          `@spendgate/core: ${file} imports ${specifier}; the core imports only ${CORE_DEPENDENCIES.join(' and ')}`,
        );
      }
    }
  }
}

/** Builds @spendgate/core into `stageDir` (an empty folder): ready for `npm pack`. */
export function stageCore(stageDir) {
  const manifest = rootManifest();
  const distDir = join(stageDir, 'dist');
  compile(stageDir, {
    extends: join(ROOT, 'tsconfig.build.json'),
    compilerOptions: {
      rootDir: join(ROOT, 'src', 'core'),
      outDir: distDir,
      // Sources are not shipped, so maps to them would point nowhere.
      sourceMap: false,
      // Type packages are looked up from the config's folder; this one is a temporary folder.
      typeRoots: [join(ROOT, 'node_modules', '@types')],
    },
    include: [join(ROOT, 'src', 'core')],
  });
  writeFileSync(
    join(distDir, 'builtin-rules.js'),
    `// The templates of spendgate's rules/ folder, as data (scripts/pack-core.mjs).\nexport const BUILTIN_TEMPLATES = ${JSON.stringify(ruleTemplates(), null, 2)};\n`,
  );
  writeFileSync(
    join(distDir, 'builtin-rules.d.ts'),
    'export declare const BUILTIN_TEMPLATES: readonly unknown[];\n',
  );
  writeFileSync(join(distDir, 'package.js'), ENTRY_JS);
  writeFileSync(join(distDir, 'package.d.ts'), ENTRY_DTS);
  checkImports(distDir);
  cpSync(join(ROOT, 'src', 'core', 'README.md'), join(stageDir, 'README.md'));
  mkdirSync(join(stageDir, 'rules'));
  cpSync(join(ROOT, 'rules', 'README.md'), join(stageDir, 'rules', 'README.md'));
  const dependencies = Object.fromEntries(
    CORE_DEPENDENCIES.map((name) => {
      const version = manifest.dependencies[name];
      if (version === undefined) throw new Error(`package.json does not depend on ${name}`);
      return [name, version];
    }),
  );
  const coreManifest = {
    name: '@spendgate/core',
    version: manifest.version,
    description:
      "spendgate's card-authorization core: policies compiled to plain functions, exact money, the decision. No I/O; depends on zod and decimal.js only.",
    license: manifest.license,
    type: 'module',
    engines: manifest.engines,
    sideEffects: false,
    main: './dist/package.js',
    types: './dist/package.d.ts',
    exports: {
      // `default`, not `import`: require() of this ES module works too (Node 20.19 and later).
      '.': { types: './dist/package.d.ts', default: './dist/package.js' },
    },
    files: ['dist', 'rules/README.md'],
    dependencies,
  };
  // The staged tsconfig.stage.json stays out of the tarball: `files` does not name it.
  writeFileSync(join(stageDir, 'package.json'), `${JSON.stringify(coreManifest, null, 2)}\n`);
  return stageDir;
}

/**
 * Stages `spendgate` itself as `npm pack` packs it (dist/ built as `npm run build` builds it,
 * rules/, README.md, package.json), in `stageDir` rather than in the clone's own dist/.
 */
export function stageMain(stageDir) {
  compile(stageDir, {
    extends: join(ROOT, 'tsconfig.build.json'),
    compilerOptions: {
      rootDir: join(ROOT, 'src'),
      outDir: join(stageDir, 'dist'),
      typeRoots: [join(ROOT, 'node_modules', '@types')],
    },
    include: [join(ROOT, 'src')],
  });
  // As the build script does: the SQL migrations ride along with the compiled store.
  cpSync(join(ROOT, 'src', 'store', 'migrations'), join(stageDir, 'dist', 'store', 'migrations'), {
    recursive: true,
    filter: (path) => !path.endsWith('.ts'),
  });
  cpSync(join(ROOT, 'rules'), join(stageDir, 'rules'), { recursive: true });
  cpSync(join(ROOT, 'README.md'), join(stageDir, 'README.md'));
  cpSync(join(ROOT, 'package.json'), join(stageDir, 'package.json'));
  return stageDir;
}

/** `npm pack` of a staged folder into `destination`; the tarball's path. */
export function pack(stageDir, destination) {
  mkdirSync(destination, { recursive: true });
  // Scripts off: the folder is built already, and `prepare` would build the clone's dist/.
  const output = execFileSync(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    { cwd: stageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [{ filename }] = JSON.parse(output);
  return join(destination, filename);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const destination = resolve(process.argv[2] ?? process.cwd());
  const stageDir = mkdtempSync(join(tmpdir(), 'spendgate-core-'));
  try {
    const tarball = pack(stageCore(stageDir), destination);
    process.stdout.write(`${tarball}\n`);
  } finally {
    rmSync(stageDir, { recursive: true, force: true });
  }
}
