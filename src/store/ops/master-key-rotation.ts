import { assert } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import { depositSeedAad } from '../deposit-keys.js';
import { DecryptionError, type Keyring } from '../secrets/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { runTransaction } from '../sql/transaction.js';
import { twoFactorSecretAad } from './two-factor.js';
import { processorSecretsAad } from './processors.js';
import { webhookSecretAad } from './webhook-endpoints.js';
import {
  REWRAP_BATCH_DEFAULT,
  REWRAP_BATCH_MAX,
  type RewrapCount,
  type RewrapOptions,
} from '../port/maintenance.js';

/*
 * Re-wraps everything the master key protects under the keyring's current master key, for
 * `spendgate keys rotate-master`: the vaults' data keys, the webhook signing secrets, the
 * two-factor secrets and the deposit seed (deposit-keys.ts). A data key is re-wrapped, never replaced, so card numbers and metadata
 * encrypted under it stay as they are.
 *
 * Why it needs no downtime: every process reads under each of its master keys (keyring.ts),
 * so a row re-wrapped under the new key reads as well as one still under the old key, and the
 * rows of a kind are re-wrapped in batches of `batchMax` in id order, one transaction per
 * batch. A batch locks its rows (FOR NO KEY UPDATE, in id order, the order in which the
 * authorize path locks vaults, so the two never deadlock) for a few milliseconds: an
 * authorization of such a vault waits that long, never fails.
 *
 * Idempotent and resumable: a row already under the current key is left as it is, so a run
 * stopped anywhere (a crash, a kill) is finished by running it again, each batch being
 * committed whole or not at all. A row that no key of the keyring opens is left unchanged and
 * reported by id, never by its content.
 */

/** Batches of one kind in one run at most: at REWRAP_BATCH_MAX, 10^10 rows. */
const BATCHES_MAX = 1_000_000;
/** Ids of unreadable rows reported per kind at most (the count is always whole). */
const UNREADABLE_IDS_MAX = 10;

/** A column of ciphertexts under the master key. Names are constants, never input. */
interface SecretColumn {
  readonly kind: string;
  readonly table: string;
  readonly column: string;
  rewrap(keyring: Keyring, id: string, token: string): string | null;
}

export const MASTER_KEY_SECRETS: readonly SecretColumn[] = [
  {
    kind: 'vault data keys',
    table: 'vaults',
    column: 'data_key_wrapped',
    rewrap: (keyring, id, token) => keyring.rewrapVaultKey(id, token),
  },
  {
    kind: 'webhook signing secrets',
    table: 'webhook_endpoints',
    column: 'secret_enc',
    rewrap: (keyring, id, token) => keyring.rewrapSecret(token, webhookSecretAad(id)),
  },
  {
    kind: 'processor secrets',
    table: 'processor_connections',
    column: 'secrets_enc',
    rewrap: (keyring, id, token) => keyring.rewrapSecret(token, processorSecretsAad(id)),
  },
  {
    kind: 'previous processor secrets',
    table: 'processor_connections',
    column: 'previous_secrets_enc',
    rewrap: (keyring, id, token) => keyring.rewrapSecret(token, processorSecretsAad(id)),
  },
  {
    kind: 'two-factor secrets',
    table: 'accounts',
    column: 'two_factor_secret_enc',
    rewrap: (keyring, id, token) => keyring.rewrapSecret(token, twoFactorSecretAad(id)),
  },
  {
    kind: 'deposit seed',
    table: 'deposit_seed',
    column: 'seed_enc',
    rewrap: (keyring, id, token) => keyring.rewrapSecret(token, depositSeedAad(id)),
  },
];

/** One pass over every kind; returns each kind's counts. */
export async function rewrapMasterKeySecrets(
  ctx: StoreContext,
  options: RewrapOptions = {},
): Promise<RewrapCount[]> {
  const batchMax = options.batchMax ?? REWRAP_BATCH_DEFAULT;
  assert(
    Number.isSafeInteger(batchMax) && batchMax >= 1 && batchMax <= REWRAP_BATCH_MAX,
    'a re-wrap batch is 1 to 10,000 rows',
  );
  const counts: RewrapCount[] = [];
  for (const secrets of MASTER_KEY_SECRETS) {
    counts.push(await rewrapColumn(ctx, secrets, batchMax, options.onBatch));
  }
  return counts;
}

async function rewrapColumn(
  ctx: StoreContext,
  secrets: SecretColumn,
  batchMax: number,
  onBatch: RewrapOptions['onBatch'],
): Promise<RewrapCount> {
  let count: RewrapCount = {
    kind: secrets.kind,
    checked: 0,
    rewrapped: 0,
    unreadable: 0,
    unreadableIds: [],
  };
  // Every id is longer than '', so the first batch starts at the first row.
  let afterId = '';
  for (let batch = 0; batch < BATCHES_MAX; batch++) {
    const done = await runTransaction(ctx.client, (tx) =>
      rewrapBatch(ctx.keyring, tx, secrets, afterId, batchMax),
    );
    count = {
      kind: secrets.kind,
      checked: count.checked + done.checked,
      rewrapped: count.rewrapped + done.rewrapped,
      unreadable: count.unreadable + done.unreadableIds.length,
      unreadableIds: [...count.unreadableIds, ...done.unreadableIds].slice(0, UNREADABLE_IDS_MAX),
    };
    onBatch?.(count);
    // Only an empty batch ends the kind: a short one may have lost rows to a concurrent
    // change (FOR NO KEY UPDATE drops a row that no longer matches once its lock is free).
    if (done.lastId === null) return count;
    afterId = done.lastId;
  }
  throw new Error(`more than ${BATCHES_MAX} batches of ${secrets.kind}: run again to go on`);
}

async function rewrapBatch(
  keyring: Keyring,
  tx: SqlQueryable,
  secrets: SecretColumn,
  afterId: string,
  batchMax: number,
): Promise<{ lastId: string | null; checked: number; rewrapped: number; unreadableIds: string[] }> {
  const { table, column } = secrets;
  const { rows } = await tx.query<{ id: string; token: string }>(
    `SELECT id, ${column} AS token FROM ${table}
     WHERE id > $1 AND ${column} IS NOT NULL
     ORDER BY id LIMIT $2
     FOR NO KEY UPDATE`,
    [afterId, batchMax],
  );
  const ids: string[] = [];
  const tokens: string[] = [];
  const unreadableIds: string[] = [];
  for (const row of rows) {
    let rewrapped: string | null;
    try {
      rewrapped = secrets.rewrap(keyring, row.id, row.token);
    } catch (error) {
      if (!(error instanceof DecryptionError)) throw error;
      unreadableIds.push(row.id);
      continue;
    }
    if (rewrapped === null) continue;
    ids.push(row.id);
    tokens.push(rewrapped);
  }
  if (ids.length > 0) {
    const { rowCount } = await tx.query(
      `UPDATE ${table} AS target SET ${column} = source.token
       FROM unnest($1::text[], $2::text[]) AS source(id, token)
       WHERE target.id = source.id`,
      [ids, tokens],
    );
    assert(rowCount === ids.length, 'every locked row is re-wrapped');
  }
  return {
    lastId: rows.at(-1)?.id ?? null,
    checked: rows.length,
    rewrapped: ids.length,
    unreadableIds,
  };
}
