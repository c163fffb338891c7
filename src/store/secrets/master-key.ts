import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../config/env.js';
import { KEY_BYTES, moveKeyBytes } from './envelope.js';
import { DECRYPT_ONLY_KEYS_MAX, type MasterKeys } from './keyring.js';

/*
 * The master key, which wraps every vault's data key. With PostgreSQL it must come from the
 * environment: a key kept beside a shared database would protect nothing. The embedded default
 * keeps it in `<dataDir>/master.key`, generated on first start, so a local run needs no setup.
 * No message ever contains the key or the text it was read from.
 */

export const MASTER_KEY_ENV = 'SPENDGATE_MASTER_KEY';
export const MASTER_KEY_FILE = 'master.key';
/**
 * Keys that decrypt but never encrypt, comma-separated: during a rotation, the old key once
 * SPENDGATE_MASTER_KEY is the new one, or the new key before it becomes SPENDGATE_MASTER_KEY
 * (docs/operations.md).
 */
export const MASTER_KEY_DECRYPT_ONLY_ENV = 'SPENDGATE_MASTER_KEY_DECRYPT_ONLY';
/**
 * The embedded database's old key while `keys rotate-master` re-wraps under the new one in
 * `master.key`; read as a decrypt-only key, so that a rotation cut short leaves nothing
 * unreadable; removed once every secret is under the new key.
 */
export const PREVIOUS_MASTER_KEY_FILE = 'master.key.previous';

// 32 bytes are 44 base64 characters; the slack allows a newline and whitespace from an editor.
const KEY_FILE_BYTES_MAX = 256;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const KEY_FORMAT = `32 bytes in base64 (44 characters, e.g. from \`openssl rand -base64 32\`)`;

export interface MasterKeyOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The embedded database's directory, or null when a PostgreSQL server is configured. */
  readonly dataDir: string | null;
}

/** Returns the 32-byte master key; a missing or malformed key throws a `ConfigError`. */
export function loadMasterKey(options: MasterKeyOptions): Buffer {
  const fromEnv = options.env[MASTER_KEY_ENV];
  if (fromEnv !== undefined) {
    const key = decodeKey(fromEnv);
    if (key === undefined) throw new ConfigError(`${MASTER_KEY_ENV} must be ${KEY_FORMAT}`);
    return key;
  }
  if (options.dataDir === null) {
    throw new ConfigError(`${MASTER_KEY_ENV} is required when DATABASE_URL is set (${KEY_FORMAT})`);
  }
  return loadOrCreateKeyFile(options.dataDir);
}

/**
 * The current key (as `loadMasterKey`) and the decrypt-only keys: SPENDGATE_MASTER_KEY_DECRYPT_ONLY,
 * and on the embedded default `master.key.previous` when a rotation left it.
 */
export function loadMasterKeys(options: MasterKeyOptions): MasterKeys {
  const current = loadMasterKey(options);
  const decryptOnly: Buffer[] = [];
  const listed = options.env[MASTER_KEY_DECRYPT_ONLY_ENV];
  if (listed !== undefined) {
    const texts = listed.split(',');
    if (texts.length > DECRYPT_ONLY_KEYS_MAX) {
      throw new ConfigError(
        `${MASTER_KEY_DECRYPT_ONLY_ENV} holds at most ${DECRYPT_ONLY_KEYS_MAX} keys, comma-separated`,
      );
    }
    for (const [index, text] of texts.entries()) {
      const key = decodeKey(text);
      if (key === undefined) {
        throw new ConfigError(
          `${MASTER_KEY_DECRYPT_ONLY_ENV}: key ${index + 1} of ${texts.length} must be ${KEY_FORMAT}`,
        );
      }
      decryptOnly.push(key);
    }
  }
  if (options.env[MASTER_KEY_ENV] === undefined && options.dataDir !== null) {
    const previous = readKeyFile(join(options.dataDir, PREVIOUS_MASTER_KEY_FILE));
    if (previous !== undefined) decryptOnly.push(previous);
  }
  if (decryptOnly.length > DECRYPT_ONLY_KEYS_MAX) {
    throw new ConfigError(`at most ${DECRYPT_ONLY_KEYS_MAX} decrypt-only master keys`);
  }
  return { current, decryptOnly };
}

/**
 * The embedded default's rotation, first step: the old key is kept as `master.key.previous`
 * and `master.key` replaced by a new key, each file appearing whole (link, rename) and made
 * durable before the next step, so that whenever the process stops, the two files hold every
 * key a stored secret may be under. A rotation cut short after the replacement is resumed
 * (`resumed`): its new key is kept, never replaced by a third. The caller holds the data
 * folder's lock, so no server reads the files meanwhile.
 */
export function beginMasterKeyFileRotation(dataDir: string): { readonly resumed: boolean } {
  const path = join(dataDir, MASTER_KEY_FILE);
  const previousPath = join(dataDir, PREVIOUS_MASTER_KEY_FILE);
  const current = readKeyFile(path);
  if (current === undefined) {
    throw new ConfigError(
      `${path} does not exist: the embedded database has no master key to rotate yet`,
    );
  }
  try {
    let previous = readKeyFile(previousPath);
    if (previous !== undefined && !previous.equals(current)) return { resumed: true };
    if (previous === undefined) {
      publishKeyFile(dataDir, previousPath, current);
      previous = readKeyFile(previousPath);
      if (previous === undefined || !previous.equals(current)) {
        throw new ConfigError(`${previousPath} changed while it was written`);
      }
    }
    previous.fill(0);
    replaceKeyFile(dataDir, path);
    return { resumed: false };
  } finally {
    current.fill(0);
  }
}

/** The rotation's last step, once no secret is under the old key: the old key is deleted. */
export function finishMasterKeyFileRotation(dataDir: string): void {
  try {
    unlinkSync(join(dataDir, PREVIOUS_MASTER_KEY_FILE));
  } catch (error) {
    if (!hasCode(error, 'ENOENT')) throw error;
  }
  syncDirectory(dataDir);
}

/** Writes `key` to `path` unless it exists (link's EEXIST), as the first key file is made. */
function publishKeyFile(dataDir: string, path: string, key: Buffer): void {
  const temporary = writeTemporaryKeyFile(path, key);
  try {
    try {
      linkSync(temporary, path);
    } catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error;
    }
  } finally {
    unlinkSync(temporary);
  }
  syncDirectory(dataDir);
}

/** Replaces the key at `path` by a new one; rename makes the new file appear whole. */
function replaceKeyFile(dataDir: string, path: string): void {
  const key = randomBytes(KEY_BYTES);
  const temporary = writeTemporaryKeyFile(path, key);
  key.fill(0);
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
  syncDirectory(dataDir);
}

/** A key file of this process beside `path` (flag 'wx', mode 0o600), written and synced. */
function writeTemporaryKeyFile(path: string, key: Buffer): string {
  const text = `${key.toString('base64')}\n`;
  const temporary = `${path}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temporary;
}

function loadOrCreateKeyFile(dataDir: string): Buffer {
  const path = join(dataDir, MASTER_KEY_FILE);
  const existing = readKeyFile(path);
  if (existing !== undefined) return existing;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  createKeyFile(dataDir, path);
  // Whether this process or a concurrent one created it, the file on disk is the key.
  const created = readKeyFile(path);
  if (created === undefined) throw new ConfigError(`${path} vanished just after it was created`);
  return created;
}

/**
 * Writes a new key to a temporary file of this process (flag 'wx', mode 0o600) and publishes it
 * with `link`, which fails with EEXIST if the key file exists. Opening the key file itself with
 * 'wx' would also never overwrite, but a concurrent start could read it between its creation
 * and the write, see it empty and refuse it; a linked file appears complete or not at all.
 */
function createKeyFile(dataDir: string, path: string): void {
  const key = randomBytes(KEY_BYTES);
  try {
    publishKeyFile(dataDir, path, key);
  } finally {
    key.fill(0);
  }
}

/** Returns the key in the file, or undefined if there is no file. */
function readKeyFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  let content: Buffer;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > KEY_FILE_BYTES_MAX) throw badKeyFile(path);
    content = readFileSync(fd);
  } finally {
    closeSync(fd);
  }
  const key = decodeKey(content.toString('latin1'));
  content.fill(0);
  if (key === undefined) throw badKeyFile(path);
  return key;
}

function badKeyFile(path: string): ConfigError {
  // Deleting the file would make a new key and every stored secret unreadable: say so.
  return new ConfigError(
    `${path} must hold ${KEY_FORMAT}; restore the original file rather than delete it, ` +
      `since secrets stored under it cannot be read with another key`,
  );
}

/** Strict base64 of exactly 32 bytes, else undefined; node's decoder alone skips bad characters. */
function decodeKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!BASE64.test(trimmed)) return undefined;
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== KEY_BYTES || bytes.toString('base64') !== trimmed) {
    bytes.fill(0);
    return undefined;
  }
  return moveKeyBytes(bytes);
}

/** Makes the new directory entry durable, so a crash cannot lose a key already in use. */
function syncDirectory(dir: string): void {
  // Node cannot open a directory on Windows; there the entry's durability is left to the OS.
  if (process.platform === 'win32') return;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function hasCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
