import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The invariants ARCHITECTURE.md states, checked: src/core does no I/O and imports nothing
 * outside itself but zod and decimal.js; it reads no clock and no randomness (time is an input);
 * the layers import one way, and the local chain is reached from the CLI and the tests only.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const core = join(root, 'src', 'core');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('src/core is pure', () => {
  const files = sources(core);

  it('has source files to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((file) => [relative(root, file), file]))(
    '%s imports only zod, decimal.js and src/core',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(IMPORT)) {
        const specifier = (match[1] ?? match[2]) as string;
        if (specifier.startsWith('.')) {
          const target = resolve(dirname(file), specifier);
          expect(target.startsWith(`${core}/`), `${specifier} leaves src/core`).toBe(true);
        } else {
          expect(['zod', 'decimal.js'], specifier).toContain(specifier);
        }
      }
    },
  );

  it.each(files.map((file) => [relative(root, file), file]))(
    '%s reads no clock, randomness, process or console',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      for (const banned of [
        'Date.now(',
        'new Date(',
        'Math.random(',
        'process.',
        'console.',
        'require(',
        'globalThis',
        'fetch(',
      ]) {
        expect(text.includes(banned), banned).toBe(false);
      }
    },
  );
});

/** The relative imports of every file below `dir`, as [file, absolute target] pairs. */
function relativeImports(dir: string): [string, string][] {
  return sources(dir).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(IMPORT)]
      .map((match) => (match[1] ?? match[2]) as string)
      .filter((specifier) => specifier.startsWith('.'))
      .map(
        (specifier) =>
          [relative(root, file), resolve(dirname(file), specifier)] as [string, string],
      ),
  );
}

describe('src/client, the typed client (@spendgate/client)', () => {
  it('imports only its own files and openapi-fetch, and nothing else of src imports it', () => {
    const dir = join(root, 'src', 'client');
    for (const file of sources(dir)) {
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const specifier = (match[1] ?? match[2]) as string;
        if (specifier.startsWith('.')) {
          expect(resolve(dirname(file), specifier).startsWith(`${dir}/`), specifier).toBe(true);
        } else {
          expect(specifier).toBe('openapi-fetch');
        }
      }
    }
    const users = sources(join(root, 'src'))
      .filter((file) => !file.startsWith(`${dir}/`))
      .filter((file) =>
        [...readFileSync(file, 'utf8').matchAll(IMPORT)].some((match) =>
          resolve(dirname(file), (match[1] ?? match[2]) as string).startsWith(`${dir}/`),
        ),
      );
    expect(users).toEqual([]);
  });
});

describe('the layers import one way (ARCHITECTURE.md)', () => {
  const folder = (name: string) => `${join(root, 'src', name)}/`;

  it.each([
    ['http', ['workers', 'cli', 'local-chain']],
    ['workers', ['http', 'cli', 'local-chain']],
    ['store', ['http', 'workers', 'cli', 'outbound', 'local-chain']],
    ['outbound', ['http', 'workers', 'cli', 'store', 'local-chain']],
    ['solana', ['http', 'workers', 'cli', 'store', 'outbound', 'local-chain']],
    // The local chain stands in for a cluster: sharing no code with src/solana, it cannot share
    // a mistake with the code it tests.
    ['local-chain', ['http', 'workers', 'cli', 'store', 'outbound', 'solana']],
  ])('src/%s imports nothing from %j', (layer, forbidden) => {
    const imports = relativeImports(join(root, 'src', layer));
    expect(imports.length).toBeGreaterThan(0);
    const crossing = imports.filter(([, target]) =>
      forbidden.some((other) => target.startsWith(folder(other))),
    );
    expect(crossing).toEqual([]);
  });

  it('only src/cli (test mode) reaches src/local-chain; no production path does', () => {
    const outside = relativeImports(join(root, 'src')).filter(
      ([file]) => !['cli', 'local-chain'].some((name) => join(root, file).startsWith(folder(name))),
    );
    expect(outside.length).toBeGreaterThan(100);
    const crossing = outside.filter(([, target]) => target.startsWith(folder('local-chain')));
    expect(crossing).toEqual([]);
  });
});

describe('the store port (ARCHITECTURE.md)', () => {
  it('is the only way into state: nothing outside src/store imports src/store/ops', () => {
    const ops = `${join(root, 'src', 'store', 'ops')}/`;
    const outside = ['http', 'workers', 'cli', 'outbound', 'solana'].flatMap((layer) =>
      relativeImports(join(root, 'src', layer)),
    );
    expect(outside.length).toBeGreaterThan(50);
    expect(outside.filter(([, target]) => target.startsWith(ops))).toEqual([]);
  });

  it('owns its types: nothing in src/store/port imports src/store/ops or replica-reads.ts', () => {
    // The port declares; ops and the replica routing implement it. An import the other way
    // would make the port's shape depend on an implementation (and close a circle with it).
    const port = join(root, 'src', 'store', 'port');
    const implementations = [
      `${join(root, 'src', 'store', 'ops')}/`,
      join(root, 'src', 'store', 'replica-reads.js'),
    ];
    const imports = relativeImports(port);
    expect(imports.length).toBeGreaterThan(10);
    const reaching = imports.filter(([, target]) =>
      implementations.some((implementation) => target.startsWith(implementation)),
    );
    expect(reaching).toEqual([]);
  });

  it('hands out no SQL client: the service layers never reach store.client', () => {
    const files = ['http', 'workers', 'outbound'].flatMap((layer) =>
      sources(join(root, 'src', layer)),
    );
    const reaching = files.filter((file) => /\bstore\.client\b/.test(readFileSync(file, 'utf8')));
    expect(reaching.map((file) => relative(root, file))).toEqual([]);
  });
});

describe("ARCHITECTURE.md's table of imports", () => {
  const folders = ['cli', 'http', 'workers', 'store', 'outbound', 'rule-library', 'solana'];
  const stated = (folder: string): string[] => {
    const doc = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
    const row = new RegExp(`^\\| src/${folder} +\\|([^|]*)\\|`, 'm').exec(doc);
    expect(row, `a row for src/${folder}`).not.toBeNull();
    const list = (row?.[1] ?? '').trim();
    return list === '' ? [] : list.split(', ').sort();
  };

  it.each(folders.concat(['local-chain', 'config', 'core']))(
    'names every folder src/%s imports, and no other',
    (folder) => {
      const source = join(root, 'src', folder);
      const actual = new Set<string>();
      for (const [, target] of relativeImports(source)) {
        const parts = relative(join(root, 'src'), target).split('/');
        // A folder other than its own; the root modules (ids.ts, redis.ts) are no layer.
        if (parts.length > 1 && parts[0] !== folder) actual.add(parts[0] as string);
      }
      expect([...actual].sort()).toEqual(stated(folder));
    },
  );
});

describe('the authorize engine, src/store/authorize (ARCHITECTURE.md)', () => {
  const engine = join(root, 'src', 'store', 'authorize');
  const inside = (path: string) => path.startsWith(`${engine}/`);
  // The engine's insides: its lanes, its state and the steps of a batch. The rest of the store
  // names the engine (engine.ts), the request's shapes (batch.ts) and the messages beside it.
  const insides = [
    'lanes.ts',
    'known-state.ts',
    'memory.ts',
    'two-trips.ts',
    'one-trip.ts',
    'lock-and-read.ts',
    'decide-in-memory.ts',
    'write.ts',
    'card-policy-batch.ts',
  ].map((name) => join(engine, name));
  const resolved = (target: string) => target.replace(/\.js$/, '.ts');

  it('is reached from outside src/store through the port alone', () => {
    const outside = ['http', 'workers', 'cli', 'outbound', 'solana', 'rule-library', 'core']
      .flatMap((layer) => relativeImports(join(root, 'src', layer)))
      .concat(relativeImports(join(root, 'src')).filter(([file]) => !file.includes('/', 4)));
    expect(outside.length).toBeGreaterThan(50);
    expect(outside.filter(([, target]) => inside(target))).toEqual([]);
  });

  it('keeps its lanes, known state, caches and batch steps to itself', () => {
    for (const file of insides) expect(existsSync(file), file).toBe(true);
    const store = relativeImports(join(root, 'src', 'store')).filter(
      ([file]) => !inside(join(root, file)),
    );
    const reaching = store.filter(([, target]) => inside(target));
    expect(reaching.length).toBeGreaterThan(0);
    expect(reaching.filter(([, target]) => insides.includes(resolved(target)))).toEqual([]);
  });

  it('has no import circle among its files', () => {
    const edges = new Map<string, string[]>();
    for (const [file, target] of relativeImports(engine)) {
      if (!inside(target)) continue;
      const from = join(root, file);
      edges.set(from, [...(edges.get(from) ?? []), resolved(target)]);
    }
    expect(edges.size).toBeGreaterThan(5);
    // Depth first: a file met again while still on the path closes a circle.
    const done = new Set<string>();
    const circles: string[][] = [];
    const visit = (file: string, path: string[]): void => {
      if (path.includes(file)) {
        circles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(engine, f)));
        return;
      }
      if (done.has(file)) return;
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      done.add(file);
    };
    for (const file of edges.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});
