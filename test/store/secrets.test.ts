import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect, promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { InvariantError } from '../../src/core/assert.js';
import {
  API_KEY_HASH_HEX_LENGTH,
  DecryptionError,
  decryptText,
  encryptText,
  generateDataKey,
  hashApiKey,
  Keyring,
  loadMasterKey,
  MASTER_KEY_ENV,
  MASTER_KEY_FILE,
  unwrapDataKey,
  wrapDataKey,
} from '../../src/store/secrets/index.js';

/**
 * Secrets at rest: the envelope format fails closed on every kind of damage with one error that
 * carries no secret, the keyring's cache is bounded and never the only copy of a key, and the
 * master key is read strictly and created once even by concurrent starts.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const execFileAsync = promisify(execFile);

const AAD = 'card:card_1:number';
const CARD_NUMBER = '4111111111111111';

/** Every spelling of key bytes that could leak into a message. */
function spellings(key: Buffer): string[] {
  return [key.toString('hex'), key.toString('base64'), key.toString('base64url')];
}

function failure(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

function decryptionFailure(run: () => unknown): DecryptionError {
  const error = failure(run);
  expect(error).toBeInstanceOf(DecryptionError);
  if (!(error instanceof DecryptionError)) throw error;
  return error;
}

function expectNoSecrets(error: Error, secrets: readonly string[]): void {
  const texts = [error.message, String(error), error.stack ?? '', inspect(error)];
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(0);
    for (const text of texts) expect(text.includes(secret)).toBe(false);
  }
}

/** Flips one bit in one part of a token (1: iv, 2: tag, 3: ciphertext), keeping it well formed. */
function tamper(token: string, part: 1 | 2 | 3): string {
  const parts = token.split('.');
  const bytes = Buffer.from(parts[part] ?? '', 'base64url');
  expect(bytes.length).toBeGreaterThan(0);
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

describe('encryptText and decryptText', () => {
  const key = generateDataKey();

  it.each([
    ['a card number', CARD_NUMBER],
    ['empty text', ''],
    ['unicode text', 'Zürich café ✓ 東京 🚀 \u0000 end'],
    ['long text', 'x'.repeat(100_000)],
  ])('round-trips %s', (_name, plaintext) => {
    const token = encryptText(key, plaintext, AAD);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/);
    expect(decryptText(key, token, AAD)).toBe(plaintext);
  });

  it('writes no plaintext into the token', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    expect(token.includes(CARD_NUMBER)).toBe(false);
    expect(token.includes(Buffer.from(CARD_NUMBER).toString('base64url'))).toBe(false);
  });

  it('encrypts the same plaintext to different tokens (random IV)', () => {
    const tokens = new Set<string>();
    const ivs = new Set<string>();
    for (let index = 0; index < 100; index++) {
      const token = encryptText(key, CARD_NUMBER, AAD);
      tokens.add(token);
      ivs.add(token.split('.')[1] ?? '');
      expect(decryptText(key, token, AAD)).toBe(CARD_NUMBER);
    }
    expect(tokens.size).toBe(100);
    expect(ivs.size).toBe(100);
  });

  it('refuses the wrong key with DecryptionError and no secret in the error', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    const otherKey = generateDataKey();
    const error = decryptionFailure(() => decryptText(otherKey, token, AAD));
    expect(error.name).toBe('DecryptionError');
    expectNoSecrets(error, [CARD_NUMBER, token, ...spellings(key), ...spellings(otherKey)]);
  });

  it.each([
    ['iv', 1],
    ['tag', 2],
    ['ciphertext', 3],
  ] as const)('refuses a tampered %s', (_name, part) => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    const tampered = tamper(token, part);
    expect(tampered).not.toBe(token);
    const error = decryptionFailure(() => decryptText(key, tampered, AAD));
    expectNoSecrets(error, [CARD_NUMBER, token, tampered, ...spellings(key)]);
  });

  it('refuses the wrong AAD', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    const error = decryptionFailure(() => decryptText(key, token, 'card:card_1:cvv'));
    expectNoSecrets(error, [CARD_NUMBER, token, ...spellings(key)]);
  });

  it('refuses a token copied to another row', () => {
    const token = encryptText(key, CARD_NUMBER, 'card:card_1:number');
    decryptionFailure(() => decryptText(key, token, 'card:card_2:number'));
    // And the AAD is compared exactly, not as a prefix.
    decryptionFailure(() => decryptText(key, token, 'card:card_1:number '));
    decryptionFailure(() => decryptText(key, token, 'card:card_1:numbe'));
    expect(decryptText(key, token, 'card:card_1:number')).toBe(CARD_NUMBER);
  });

  it('refuses an unknown version', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    for (const version of ['v2', 'V1', 'v0', '']) {
      const relabelled = `${version}${token.slice('v1'.length)}`;
      const error = decryptionFailure(() => decryptText(key, relabelled, AAD));
      expectNoSecrets(error, [CARD_NUMBER, relabelled, ...spellings(key)]);
    }
  });

  it('refuses malformed tokens', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    const [version, iv, tag, ciphertext] = token.split('.') as [string, string, string, string];
    const malformed = [
      '',
      'v1',
      'v1...',
      `${token}.`,
      `${token}.extra`,
      `${version}.${iv}.${tag}`,
      ` ${token}`,
      `${token}\n`,
      `${version}.${iv}.${tag}.${ciphertext}=`,
      `${version}.${iv}.${tag}.${ciphertext.replaceAll('-', '+').replaceAll('_', '/')}!`,
      `${version}.${iv.slice(0, -2)}.${tag}.${ciphertext}`,
      `${version}.${iv}.${tag.slice(0, -6)}.${ciphertext}`,
      `${version}.${iv}AAAA.${tag}.${ciphertext}`,
      `${version}.${iv}.${tag}AAAA.${ciphertext}`,
      `${version}.${iv}.${tag}.${ciphertext.slice(0, -1)}`,
      `${version}.${tag}.${iv}.${ciphertext}`,
      'not a token at all',
    ];
    for (const bad of malformed) {
      const error = decryptionFailure(() => decryptText(key, bad, AAD));
      expectNoSecrets(error, [CARD_NUMBER, ...spellings(key)]);
    }
  });

  it('refuses a key of the wrong length as a bug, not a bad token', () => {
    const token = encryptText(key, CARD_NUMBER, AAD);
    expect(failure(() => decryptText(key.subarray(0, 16), token, AAD))).toBeInstanceOf(
      InvariantError,
    );
    expect(failure(() => encryptText(Buffer.alloc(31), CARD_NUMBER, AAD))).toBeInstanceOf(
      InvariantError,
    );
  });

  it('refuses text that UTF-8 cannot carry rather than alter it', () => {
    expect(failure(() => encryptText(key, 'a\uD800b', AAD))).toBeInstanceOf(InvariantError);
    expect(failure(() => encryptText(key, '\uDC00', AAD))).toBeInstanceOf(InvariantError);
  });
});

describe('wrapDataKey and unwrapDataKey', () => {
  const masterKey = randomBytes(32);

  it('unwraps to the same data key', () => {
    const dataKey = generateDataKey();
    expect(dataKey.length).toBe(32);
    const wrapped = wrapDataKey(masterKey, dataKey, 'vault_1');
    expect(wrapped.startsWith('v1.')).toBe(true);
    for (const spelling of spellings(dataKey)) expect(wrapped.includes(spelling)).toBe(false);
    expect(unwrapDataKey(masterKey, wrapped, 'vault_1').equals(dataKey)).toBe(true);
  });

  it('makes a new data key each time', () => {
    expect(generateDataKey().equals(generateDataKey())).toBe(false);
  });

  it('refuses to unwrap for another vault', () => {
    const dataKey = generateDataKey();
    const wrapped = wrapDataKey(masterKey, dataKey, 'vault_1');
    const error = decryptionFailure(() => unwrapDataKey(masterKey, wrapped, 'vault_2'));
    expectNoSecrets(error, [wrapped, ...spellings(dataKey), ...spellings(masterKey)]);
  });

  it('refuses to unwrap with another master key', () => {
    const dataKey = generateDataKey();
    const wrapped = wrapDataKey(masterKey, dataKey, 'vault_1');
    const otherMasterKey = randomBytes(32);
    const error = decryptionFailure(() => unwrapDataKey(otherMasterKey, wrapped, 'vault_1'));
    expectNoSecrets(error, [...spellings(dataKey), ...spellings(otherMasterKey)]);
  });

  it('binds a wrapped key to the vault-key AAD, not to a field of the vault', () => {
    const dataKey = generateDataKey();
    const wrapped = wrapDataKey(masterKey, dataKey, 'vault_1');
    decryptionFailure(() => decryptText(masterKey, wrapped, 'vault_1'));
    decryptionFailure(() => decryptText(masterKey, wrapped, 'card:vault_1:number'));
  });
});

describe('Keyring', () => {
  const masterKey = randomBytes(32);

  it('encrypts and decrypts under a new vault key', () => {
    const keyring = new Keyring(masterKey);
    expect(keyring.entriesMax).toBe(10_000);
    const { wrapped } = keyring.newVaultKey('vault_1');
    const token = keyring.encrypt('vault_1', wrapped, CARD_NUMBER, AAD);
    expect(keyring.decrypt('vault_1', wrapped, token, AAD)).toBe(CARD_NUMBER);
    // Another process with the same master key reads it from the stored wrapped key alone.
    const restarted = new Keyring(masterKey);
    expect(restarted.decrypt('vault_1', wrapped, token, AAD)).toBe(CARD_NUMBER);
  });

  it('gives each vault its own data key', () => {
    const keyring = new Keyring(masterKey);
    const first = keyring.newVaultKey('vault_1');
    const second = keyring.newVaultKey('vault_2');
    const token = keyring.encrypt('vault_1', first.wrapped, CARD_NUMBER, AAD);
    const firstKey = unwrapDataKey(masterKey, first.wrapped, 'vault_1');
    const secondKey = unwrapDataKey(masterKey, second.wrapped, 'vault_2');
    expect(firstKey.equals(secondKey)).toBe(false);
    expect(decryptText(firstKey, token, AAD)).toBe(CARD_NUMBER);
    decryptionFailure(() => keyring.decrypt('vault_2', second.wrapped, token, AAD));
  });

  it('evicts the least recently used key and re-unwraps an evicted one', () => {
    const keyring = new Keyring(masterKey, 2);
    const one = keyring.newVaultKey('vault_1').wrapped;
    const two = keyring.newVaultKey('vault_2').wrapped;
    const token = keyring.encrypt('vault_1', one, CARD_NUMBER, AAD);
    // vault_1 was used last, so vault_2 goes when vault_3 arrives.
    const three = keyring.newVaultKey('vault_3').wrapped;
    expect(keyring.size).toBe(2);
    expect([keyring.has('vault_1'), keyring.has('vault_2'), keyring.has('vault_3')]).toEqual([
      true,
      false,
      true,
    ]);
    // vault_2 was evicted: it is unwrapped again from the stored form, and evicts vault_1.
    const tokenTwo = new Keyring(masterKey).encrypt('vault_2', two, 'two', AAD);
    expect(keyring.decrypt('vault_2', two, tokenTwo, AAD)).toBe('two');
    expect(keyring.size).toBe(2);
    expect([keyring.has('vault_1'), keyring.has('vault_2'), keyring.has('vault_3')]).toEqual([
      false,
      true,
      true,
    ]);
    expect(keyring.decrypt('vault_1', one, token, AAD)).toBe(CARD_NUMBER);
    expect([keyring.has('vault_1'), keyring.has('vault_2'), keyring.has('vault_3')]).toEqual([
      true,
      true,
      false,
    ]);
    const tokenThree = keyring.encrypt('vault_3', three, 'three', AAD);
    expect(new Keyring(masterKey).decrypt('vault_3', three, tokenThree, AAD)).toBe('three');
    expect(keyring.size).toBe(2);
  });

  it('holds its bound over many vaults, and every evicted key still decrypts', () => {
    const entriesMax = 5;
    const keyring = new Keyring(masterKey, entriesMax);
    const vaults: { id: string; wrapped: string; token: string }[] = [];
    for (let index = 0; index < 50; index++) {
      const id = `vault_${index}`;
      const { wrapped } = keyring.newVaultKey(id);
      vaults.push({ id, wrapped, token: keyring.encrypt(id, wrapped, `secret ${index}`, AAD) });
      expect(keyring.size).toBeLessThanOrEqual(entriesMax);
    }
    expect(keyring.size).toBe(entriesMax);
    expect(keyring.has('vault_0')).toBe(false);
    for (const [index, vault] of vaults.entries()) {
      expect(keyring.decrypt(vault.id, vault.wrapped, vault.token, AAD)).toBe(`secret ${index}`);
      expect(keyring.size).toBeLessThanOrEqual(entriesMax);
    }
  });

  it('does not serve a cached key for a wrapped key that changed', () => {
    const keyring = new Keyring(masterKey);
    const original = keyring.newVaultKey('vault_1').wrapped;
    // The row now holds another key for the same vault (written by another process).
    const elsewhere = new Keyring(masterKey);
    const replaced = elsewhere.newVaultKey('vault_1').wrapped;
    const token = elsewhere.encrypt('vault_1', replaced, CARD_NUMBER, AAD);
    expect(keyring.decrypt('vault_1', replaced, token, AAD)).toBe(CARD_NUMBER);
    // A damaged wrapped key fails even though the vault's key is cached.
    decryptionFailure(() => keyring.decrypt('vault_1', tamper(replaced, 3), token, AAD));
    decryptionFailure(() => keyring.encrypt('vault_1', tamper(original, 2), CARD_NUMBER, AAD));
  });

  it('refuses a wrapped key of another vault', () => {
    const keyring = new Keyring(masterKey);
    const other = keyring.newVaultKey('vault_2').wrapped;
    const error = decryptionFailure(() => keyring.encrypt('vault_1', other, CARD_NUMBER, AAD));
    expectNoSecrets(error, [CARD_NUMBER, ...spellings(masterKey)]);
    expect(keyring.has('vault_1')).toBe(false);
  });

  it('cannot decrypt under another master key', () => {
    const keyring = new Keyring(masterKey);
    const { wrapped } = keyring.newVaultKey('vault_1');
    const token = keyring.encrypt('vault_1', wrapped, CARD_NUMBER, AAD);
    const otherMasterKey = randomBytes(32);
    const error = decryptionFailure(() =>
      new Keyring(otherMasterKey).decrypt('vault_1', wrapped, token, AAD),
    );
    expectNoSecrets(error, [CARD_NUMBER, ...spellings(masterKey), ...spellings(otherMasterKey)]);
  });

  it('keeps its own copy of the master key', () => {
    const callerKey = Buffer.from(masterKey);
    const keyring = new Keyring(callerKey);
    const { wrapped } = keyring.newVaultKey('vault_1');
    callerKey.fill(0);
    expect(new Keyring(masterKey).encrypt('vault_1', wrapped, 'x', AAD)).toMatch(/^v1\./);
    keyring.forget('vault_1');
    expect(keyring.encrypt('vault_1', wrapped, 'x', AAD)).toMatch(/^v1\./);
  });

  it('reveals no key bytes through util.inspect, JSON.stringify or String', () => {
    const keyring = new Keyring(masterKey);
    const { wrapped } = keyring.newVaultKey('vault_1');
    const dataKey = unwrapDataKey(masterKey, wrapped, 'vault_1');
    const texts = [
      inspect(keyring),
      inspect(keyring, { showHidden: true, depth: Infinity, getters: true }),
      inspect({ nested: { keyring } }, { depth: Infinity }),
      JSON.stringify(keyring),
      JSON.stringify({ keyring }),
      String(keyring),
    ];
    for (const text of texts) {
      expect(text).toContain('redacted');
      for (const spelling of [...spellings(masterKey), ...spellings(dataKey)]) {
        expect(text.includes(spelling)).toBe(false);
      }
      // A Buffer's inspection lists its bytes as hex pairs: none appears.
      expect(text).not.toMatch(/<Buffer/);
    }
    expect(JSON.parse(JSON.stringify({ keyring }))).toEqual({ keyring: 'Keyring [redacted]' });
  });

  it('refuses a bad bound or master key as a bug', () => {
    expect(failure(() => new Keyring(masterKey, 0))).toBeInstanceOf(InvariantError);
    expect(failure(() => new Keyring(masterKey, 1.5))).toBeInstanceOf(InvariantError);
    expect(failure(() => new Keyring(Buffer.alloc(16)))).toBeInstanceOf(InvariantError);
  });
});

describe('loadMasterKey', () => {
  const directories: string[] = [];

  function temporaryDirectory(): string {
    const directory = mkdtempSync(join(tmpdir(), 'spendgate-secrets-'));
    directories.push(directory);
    return directory;
  }

  afterEach(() => {
    for (const directory of directories.splice(0)) {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  function configFailure(run: () => unknown): ConfigError {
    const error = failure(run);
    expect(error).toBeInstanceOf(ConfigError);
    if (!(error instanceof ConfigError)) throw error;
    return error;
  }

  it('reads a valid key from the environment and touches no file', () => {
    const key = randomBytes(32);
    const dataDir = join(temporaryDirectory(), 'data');
    for (const text of [key.toString('base64'), ` ${key.toString('base64')}\n`]) {
      const loaded = loadMasterKey({ env: { [MASTER_KEY_ENV]: text }, dataDir });
      expect(loaded.equals(key)).toBe(true);
    }
    const withServer = loadMasterKey({
      env: { [MASTER_KEY_ENV]: key.toString('base64') },
      dataDir: null,
    });
    expect(withServer.equals(key)).toBe(true);
    expect(existsSync(dataDir)).toBe(false);
  });

  it.each([
    ['31 bytes', randomBytes(31).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['64 bytes', randomBytes(64).toString('base64')],
    ['hex', randomBytes(32).toString('hex')],
    ['base64url', `${randomBytes(32).toString('base64url')}_-`.slice(0, 44)],
    ['not base64', 'this is definitely not a base64 master key!!'],
    ['missing padding', randomBytes(32).toString('base64').slice(0, 43)],
    ['junk inside', `${randomBytes(32).toString('base64').slice(0, 20)}*${'A'.repeat(23)}`],
  ])('refuses a key in the environment that is %s, without echoing it', (_name, text) => {
    const error = configFailure(() =>
      loadMasterKey({ env: { [MASTER_KEY_ENV]: text }, dataDir: null }),
    );
    expect(error.message).toContain(MASTER_KEY_ENV);
    expectNoSecrets(error, [text, text.slice(0, 12), text.slice(-12)]);
  });

  it('refuses an empty key in the environment rather than fall back to a file', () => {
    const dataDir = temporaryDirectory();
    const error = configFailure(() => loadMasterKey({ env: { [MASTER_KEY_ENV]: '' }, dataDir }));
    expect(error.message).toContain(MASTER_KEY_ENV);
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
  });

  it('requires the key from the environment when a PostgreSQL server is configured', () => {
    const error = configFailure(() => loadMasterKey({ env: {}, dataDir: null }));
    expect(error.message).toContain(MASTER_KEY_ENV);
    expect(error.message).toContain('DATABASE_URL');
  });

  it('creates the key file with mode 0600 and reuses it on the next load', () => {
    const dataDir = join(temporaryDirectory(), 'nested', 'data');
    const first = loadMasterKey({ env: {}, dataDir });
    expect(first.length).toBe(32);
    const path = join(dataDir, MASTER_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const content = readFileSync(path, 'utf8');
    expect(Buffer.from(content.trim(), 'base64').equals(first)).toBe(true);
    expect(readdirSync(dataDir)).toEqual([MASTER_KEY_FILE]);

    const second = loadMasterKey({ env: {}, dataDir });
    expect(second.equals(first)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(loadMasterKey({ env: {}, dataDir: temporaryDirectory() }).equals(first)).toBe(false);
  });

  it('prefers the environment to an existing key file', () => {
    const dataDir = temporaryDirectory();
    const fileKey = loadMasterKey({ env: {}, dataDir });
    const envKey = randomBytes(32);
    const loaded = loadMasterKey({ env: { [MASTER_KEY_ENV]: envKey.toString('base64') }, dataDir });
    expect(loaded.equals(envKey)).toBe(true);
    expect(loaded.equals(fileKey)).toBe(false);
  });

  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['48 bytes', randomBytes(48).toString('base64')],
    ['not base64', 'not a key, but 44 characters of plain text!\n'],
    ['empty', ''],
    ['far too large', randomBytes(32).toString('base64').repeat(100)],
  ])('refuses a key file of %s, without echoing it or replacing it', (_name, content) => {
    const dataDir = temporaryDirectory();
    const path = join(dataDir, MASTER_KEY_FILE);
    writeFileSync(path, content, { mode: 0o600 });
    const error = configFailure(() => loadMasterKey({ env: {}, dataDir }));
    expect(error.message).toContain(path);
    if (content.length > 0) expectNoSecrets(error, [content.trim().slice(0, 16)]);
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  it('refuses a directory in place of the key file', () => {
    const dataDir = temporaryDirectory();
    mkdirSync(join(dataDir, MASTER_KEY_FILE));
    expect(failure(() => loadMasterKey({ env: {}, dataDir }))).toBeInstanceOf(Error);
  });

  it('gives concurrent first starts on a new directory the same key', async () => {
    const dataDir = join(temporaryDirectory(), 'data');
    const module = pathToFileURL(join(root, 'src', 'store', 'secrets', 'master-key.ts')).href;
    // Each process waits for the same instant, so the creations race for real.
    const script = `
      import { createHash } from 'node:crypto';
      import { loadMasterKey } from ${JSON.stringify(module)};
      const [dataDir, startAtMs] = process.argv.slice(1);
      const waitMs = Number(startAtMs) - Date.now();
      if (waitMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, waitMs);
      const key = loadMasterKey({ env: {}, dataDir });
      console.log(createHash('sha256').update(key).digest('hex'));
    `;
    const startAtMs = Date.now() + 2_000;
    const processes = 6;
    const runs = Array.from({ length: processes }, () =>
      execFileAsync(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script, dataDir, String(startAtMs)],
        { cwd: root },
      ),
    );
    const digests = (await Promise.all(runs)).map((run) => run.stdout.trim());
    const own = loadMasterKey({ env: {}, dataDir });
    expect(digests).toHaveLength(processes);
    expect(new Set(digests)).toEqual(new Set([createHash('sha256').update(own).digest('hex')]));
    // No temporary file is left behind.
    expect(readdirSync(dataDir)).toEqual([MASTER_KEY_FILE]);
  });
});

describe('hashApiKey', () => {
  it('is SHA-256 in hex', () => {
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('is deterministic, 64 hex characters, and differs between keys', () => {
    const key = `sk_live_${randomBytes(24).toString('hex')}`;
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toHaveLength(API_KEY_HASH_HEX_LENGTH);
    expect(hashApiKey(key)).toBe(hash);
    expect(hash.includes(key)).toBe(false);
    const hashes = new Set<string>();
    for (let index = 0; index < 100; index++) hashes.add(hashApiKey(`${key}${index}`));
    hashes.add(hash);
    expect(hashes.size).toBe(101);
    expect(hashApiKey(`${key.slice(0, -1)}x`)).not.toBe(hash);
  });
});
