import { parseArgs } from 'node:util';
import type { Settings } from '../config/env.js';
import { REWRAP_BATCH_DEFAULT, REWRAP_BATCH_MAX, type RewrapCount } from '../store/store.js';
import {
  beginMasterKeyFileRotation,
  finishMasterKeyFileRotation,
  loadMasterKeys,
  MASTER_KEY_DECRYPT_ONLY_ENV,
  MASTER_KEY_ENV,
  MASTER_KEY_FILE,
} from '../store/secrets/index.js';
import { KEYS_USAGE, UsageError } from './keys.js';
import { openConfiguredStore } from './open-store.js';
import type { Progress } from './progress.js';

/*
 * `spendgate keys rotate-master [--batch-size N]`: re-wraps every secret the master key
 * protects (vault data keys, webhook and two-factor secrets) under the current master key, a
 * batch of rows per transaction (store/ops/master-key-rotation.ts), while servers run.
 *
 * With SPENDGATE_MASTER_KEY set, the operator holds the keys: SPENDGATE_MASTER_KEY is the new
 * key, SPENDGATE_MASTER_KEY_DECRYPT_ONLY the old one, in this command's environment as in every
 * server's (the order of the restarts is in docs/operations.md). On the embedded default, the
 * command holds the data folder (no server runs beside it) and rotates the key file itself:
 * a new `master.key`, the old one kept as `master.key.previous` until every secret is under the
 * new one, then deleted.
 *
 * A second pass follows the first: a secret it still finds under another key was written
 * during the run by a process that encrypts with an old key, so the old key is not yet free
 * to remove, and the command says so (exit 1). Output: counts and ids, never a key or a
 * wrapped key.
 */

/** Progress lines at most this often. */
const PROGRESS_EVERY_MS = 2_000;

export interface RotateResult {
  readonly lines: string[];
  readonly exitCode: 0 | 1;
}

export async function runRotateMaster(
  settings: Settings,
  argv: readonly string[],
  progress: Progress,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<RotateResult> {
  const batchMax = batchSize(argv);
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  // The embedded default's key lives in its data folder, which this command may rotate alone.
  const keyFile = settings.databaseUrl === null && present[MASTER_KEY_ENV] === undefined;
  let resumed = false;
  const store = await openConfiguredStore(settings, {
    env: present,
    progress,
    ...(keyFile
      ? {
          rekey: () => {
            resumed = beginMasterKeyFileRotation(settings.dataDir).resumed;
            return loadMasterKeys({ env: present, dataDir: settings.dataDir });
          },
        }
      : {}),
  });
  try {
    if (keyFile) {
      progress.say(
        resumed
          ? `resuming the rotation left unfinished in ${settings.dataDir}: its new ${MASTER_KEY_FILE} is kept`
          : `a new ${MASTER_KEY_FILE} is in ${settings.dataDir}; the old key is kept beside it until the end`,
      );
    } else if (present[MASTER_KEY_DECRYPT_ONLY_ENV] === undefined) {
      progress.say(
        `${MASTER_KEY_DECRYPT_ONLY_ENV} is not set: checking that every secret is under ${MASTER_KEY_ENV}`,
      );
    }
    progress.say(`re-wrapping under the current master key, ${batchMax} rows a transaction...`);
    let said = Date.now();
    const first = await store.rewrapMasterKeySecrets({
      batchMax,
      onBatch: (count) => {
        if (Date.now() - said < PROGRESS_EVERY_MS) return;
        said = Date.now();
        progress.say(`${count.kind}: ${count.checked} checked, ${count.rewrapped} re-wrapped...`);
      },
    });
    const second = await store.rewrapMasterKeySecrets({ batchMax });
    return report(first, second, {
      keyFile,
      dataDir: settings.dataDir,
      decryptOnly: present[MASTER_KEY_DECRYPT_ONLY_ENV] !== undefined,
    });
  } finally {
    await store.close();
  }
}

function batchSize(argv: readonly string[]): number {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { 'batch-size': { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(
      `${error instanceof Error ? error.message : String(error)}\n${KEYS_USAGE}`,
    );
  }
  const text = values['batch-size'] ?? String(REWRAP_BATCH_DEFAULT);
  const size = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(size >= 1 && size <= REWRAP_BATCH_MAX)) {
    throw new UsageError(`--batch-size must be a whole number from 1 to ${REWRAP_BATCH_MAX}`);
  }
  return size;
}

function report(
  first: readonly RewrapCount[],
  second: readonly RewrapCount[],
  keys: { readonly keyFile: boolean; readonly dataDir: string; readonly decryptOnly: boolean },
): RotateResult {
  const lines = first.map((count, index) => {
    const late = second[index]?.rewrapped ?? 0;
    return `${count.kind}: ${count.checked} checked, ${count.rewrapped + late} re-wrapped`;
  });
  const unreadable = second.filter((count) => count.unreadable > 0);
  if (unreadable.length > 0) {
    const which = unreadable
      .map((count) => `${count.unreadable} ${count.kind} (${count.unreadableIds.join(', ')})`)
      .join('; ');
    lines.push(
      `no configured master key opens ${which}: list the key they were written with in ` +
        `${MASTER_KEY_DECRYPT_ONLY_ENV} and run this again; keep every old key until then`,
    );
    return { lines, exitCode: 1 };
  }
  const late = second.reduce((sum, count) => sum + count.rewrapped, 0);
  if (late > 0) {
    lines.push(
      `${late} ${late === 1 ? 'secret was' : 'secrets were'} written under an old key while this ran: a process still ` +
        `encrypts with it. Restart every process with the new key as ${MASTER_KEY_ENV} ` +
        '(docs/operations.md), then run this again before removing the old key',
    );
    return { lines, exitCode: 1 };
  }
  if (keys.keyFile) {
    finishMasterKeyFileRotation(keys.dataDir);
    lines.push(
      `every secret is under the new key in ${keys.dataDir}/${MASTER_KEY_FILE}; the old key is ` +
        'deleted. A copy of the data folder made before now opens only with its own master.key',
    );
  } else if (!keys.decryptOnly) {
    lines.push(`every secret is under ${MASTER_KEY_ENV}`);
  } else {
    lines.push(
      `every secret is under ${MASTER_KEY_ENV}: the old key may leave ` +
        `${MASTER_KEY_DECRYPT_ONLY_ENV} once every process runs with the new one; keep it ` +
        'for as long as you keep backups made before now',
    );
  }
  return { lines, exitCode: 0 };
}
