import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import { ConfigError } from '../../src/config/env.js';
import {
  beginMasterKeyFileRotation,
  DecryptionError,
  finishMasterKeyFileRotation,
  Keyring,
  loadMasterKeys,
  MASTER_KEY_DECRYPT_ONLY_ENV,
  MASTER_KEY_ENV,
  MASTER_KEY_FILE,
  PREVIOUS_MASTER_KEY_FILE,
} from '../../src/store/secrets/index.js';
import type { SqlClient } from '../../src/store/sql/client.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { forEachDatabase } from '../support/databases.js';
import { usdc } from '../support/store.js';

/**
 * Re-wrapping under a new master key (store/ops/master-key-rotation.ts), on both databases:
 * every kind of secret under the master key moves to the new key, stays readable throughout
 * by a process holding both keys, is readable afterwards by the new key alone, and no longer
 * by the old key alone; a second run finds nothing to do; a run cut short between batches
 * leaves a database every two-key process reads, and the next run finishes it; a row no key
 * opens is reported by id and left as it was. The deposit seed is one of those secrets: the
 * vaults' deposit addresses derive from it, and stay the same through a rotation.
 */
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const VAULTS = 5;

interface Made {
  scope: Scope;
  cards: { id: string; number: string }[];
  depositIds: string[];
  endpoint: { id: string; secret: string };
  /** A processor connection mid-rotation: its current and previous secrets. */
  processor: { id: string; secrets: Record<string, string>[] };
  twoFactor: { accountId: string; secret: string };
  /** Each vault's deposit address: derived from the deposit seed, which rotation re-wraps. */
  depositAddresses: { vaultId: string; address: string }[];
}

forEachDatabase('master key rotation', (database) => {
  let client: SqlClient;
  let made: Made;

  /** A store over the same database with other keys, as another process would run. */
  const storeWith = (masterKey: Buffer, decryptOnly: Buffer[] = []) =>
    openStore({ client, masterKey, decryptOnlyMasterKeys: decryptOnly });

  /** Every secret read back through `store`; throws DecryptionError if one does not open. */
  async function readAll(store: Store): Promise<void> {
    for (const card of made.cards) {
      expect((await store.revealCard(made.scope, card.id)).number).toBe(card.number);
    }
    for (const id of made.depositIds) {
      expect(await store.readTransactionMetadata(made.scope, id)).toEqual({ purpose: 'float' });
    }
    expect(await store.webhookSecret(made.endpoint.id)).toBe(made.endpoint.secret);
    expect((await store.processorConnectionSecrets('stripe', made.processor.id)).secrets).toEqual(
      made.processor.secrets,
    );
    for (const { vaultId, address } of made.depositAddresses) {
      const seed = await store.depositKeySeed(vaultId);
      expect(Keypair.fromSeed(seed).publicKey.toBase58()).toBe(address);
    }
  }

  /** The stored ciphertexts under the master key, by row. */
  async function stored(): Promise<Map<string, string>> {
    const { rows } = await client.query<{ id: string; token: string }>(
      `SELECT id, data_key_wrapped AS token FROM vaults
       UNION ALL SELECT id, secret_enc FROM webhook_endpoints
       UNION ALL SELECT id, secrets_enc FROM processor_connections
       UNION ALL SELECT id || ':previous', previous_secrets_enc FROM processor_connections
       UNION ALL SELECT id, two_factor_secret_enc FROM accounts WHERE two_factor_secret_enc IS NOT NULL
       UNION ALL SELECT id, seed_enc FROM deposit_seed`,
    );
    return new Map(rows.map((row) => [row.id, row.token]));
  }

  beforeAll(async () => {
    client = await database.client();
    const old = await storeWith(OLD);
    const { id: accountId } = await old.findOrCreateAccount(
      `rotation-${randomBytes(4).toString('hex')}`,
    );
    const scope: Scope = { accountId, mode: 'test' };
    const cards: Made['cards'] = [];
    const depositIds: string[] = [];
    const depositAddresses: Made['depositAddresses'] = [];
    for (let index = 0; index < VAULTS; index++) {
      const { vault, deposit } = await old.createVault(scope, {
        name: `vault ${index}`,
        currency: 'USDC',
        metadata: {},
        initialDeposit: usdc('100'),
      });
      const funded = await old.deposit(scope, vault.id, usdc('1'), { purpose: 'float' });
      depositIds.push(funded.deposit.id);
      depositAddresses.push({ vaultId: vault.id, address: vault.depositAddress ?? '' });
      expect(deposit).not.toBeNull();
      const card = await old.createCard(scope, {
        vaultId: vault.id,
        cardholderName: 'Ada Lovelace',
        metadata: {},
      });
      cards.push({ id: card.id, number: (await old.revealCard(scope, card.id)).number });
    }
    const { endpoint, secret } = await old.createWebhookEndpoint(scope, {
      url: 'http://127.0.0.1:9/hooks',
      events: ['*'],
      description: null,
    });
    const { secret: twoFactorSecret } = await old.beginTwoFactor(accountId);
    const connection = await old.createProcessorConnection(scope, {
      processor: 'stripe',
      secrets: { signingSecret: 'whsec_rotation_first' },
    });
    await old.rotateProcessorSecrets(scope, connection.id, {
      secrets: { signingSecret: 'whsec_rotation_second' },
      graceMs: 3600_000,
    });
    made = {
      processor: {
        id: connection.id,
        secrets: [
          { signingSecret: 'whsec_rotation_second' },
          { signingSecret: 'whsec_rotation_first' },
        ],
      },
      scope,
      cards,
      depositIds,
      endpoint: { id: endpoint.id, secret },
      twoFactor: { accountId, secret: twoFactorSecret },
      depositAddresses,
    };
  });

  afterAll(async () => {
    await database.close();
  });

  it('a run cut short between batches leaves every secret readable, and the next run finishes it', async () => {
    const before = await stored();
    const rotating = await storeWith(NEW, [OLD]);
    const stop = new Error('stopped after the first batch');
    await expect(
      rotating.rewrapMasterKeySecrets({
        batchMax: 2,
        onBatch: () => {
          throw stop;
        },
      }),
    ).rejects.toBe(stop);
    const after = await stored();
    const changed = [...after].filter(([id, token]) => before.get(id) !== token);
    // The first batch (two vaults) committed whole; nothing else moved.
    expect(changed).toHaveLength(2);
    // Both kinds of server read the mix: the old key with the new one to read, and the reverse.
    await readAll(await storeWith(OLD, [NEW]));
    await readAll(await storeWith(NEW, [OLD]));
    await expect(readAll(await storeWith(NEW))).rejects.toBeInstanceOf(DecryptionError);

    const counts = await rotating.rewrapMasterKeySecrets({ batchMax: 2 });
    expect(counts).toEqual([
      {
        kind: 'vault data keys',
        checked: VAULTS,
        rewrapped: VAULTS - 2,
        unreadable: 0,
        unreadableIds: [],
      },
      {
        kind: 'webhook signing secrets',
        checked: 1,
        rewrapped: 1,
        unreadable: 0,
        unreadableIds: [],
      },
      { kind: 'processor secrets', checked: 1, rewrapped: 1, unreadable: 0, unreadableIds: [] },
      {
        kind: 'previous processor secrets',
        checked: 1,
        rewrapped: 1,
        unreadable: 0,
        unreadableIds: [],
      },
      { kind: 'two-factor secrets', checked: 1, rewrapped: 1, unreadable: 0, unreadableIds: [] },
      { kind: 'deposit seed', checked: 1, rewrapped: 1, unreadable: 0, unreadableIds: [] },
    ]);
    // The data keys themselves are the same: card numbers and metadata were not re-encrypted.
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM cards WHERE number_enc IS NOT NULL',
    );
    expect(rows[0]?.n).toBe(VAULTS);
  });

  it('leaves every secret under the new key alone: it reads them, the old key alone does not, a second run changes nothing', async () => {
    const newOnly = await storeWith(NEW);
    await readAll(newOnly);
    // The two-factor secret opens under the new key: a code from it turns two-factor on.
    const code = generateSync({
      secret: made.twoFactor.secret,
      epoch: Math.floor(Date.now() / 1000),
    });
    expect(await newOnly.verifyTwoFactor(made.twoFactor.accountId, code)).toBeNull();
    await expect(readAll(await storeWith(OLD))).rejects.toBeInstanceOf(DecryptionError);
    await readAll(await storeWith(OLD, [NEW]));

    const before = await stored();
    const again = await newOnly.rewrapMasterKeySecrets({ batchMax: 3 });
    expect(
      again.map((count) => [count.kind, count.checked, count.rewrapped, count.unreadable]),
    ).toEqual([
      ['vault data keys', VAULTS, 0, 0],
      ['webhook signing secrets', 1, 0, 0],
      ['processor secrets', 1, 0, 0],
      ['previous processor secrets', 1, 0, 0],
      ['two-factor secrets', 1, 0, 0],
      ['deposit seed', 1, 0, 0],
    ]);
    expect(await stored()).toEqual(before);
  });

  it('reports rows no configured key opens by id, and leaves them as they were', async () => {
    const before = await stored();
    const stranger = await storeWith(randomBytes(32), [randomBytes(32)]);
    const counts = await stranger.rewrapMasterKeySecrets({ batchMax: 4 });
    const vaults = counts[0];
    expect(vaults).toMatchObject({
      kind: 'vault data keys',
      checked: VAULTS,
      rewrapped: 0,
      unreadable: VAULTS,
    });
    const vaultIds = [...before.keys()].filter((id) => id.startsWith('vlt_')).sort();
    expect(vaults?.unreadableIds).toEqual(vaultIds);
    expect(counts.slice(1).map((count) => count.unreadable)).toEqual([1, 1, 1, 1, 1]);
    expect(await stored()).toEqual(before);
  });

  it('refuses a batch size outside 1 to 10,000 as a bug', async () => {
    const store = await storeWith(NEW);
    await expect(store.rewrapMasterKeySecrets({ batchMax: 0 })).rejects.toThrow(/batch/);
    await expect(store.rewrapMasterKeySecrets({ batchMax: 10_001 })).rejects.toThrow(/batch/);
  });
});

describe('the master keys a process reads', () => {
  const base64 = (key: Buffer) => key.toString('base64');

  it('takes decrypt-only keys from SPENDGATE_MASTER_KEY_DECRYPT_ONLY, comma-separated, at most 4', () => {
    const keys = loadMasterKeys({
      env: {
        [MASTER_KEY_ENV]: base64(NEW),
        [MASTER_KEY_DECRYPT_ONLY_ENV]: `${base64(OLD)},${base64(NEW)}`,
      },
      dataDir: null,
    });
    expect(keys.current.equals(NEW)).toBe(true);
    expect(keys.decryptOnly.map(base64)).toEqual([base64(OLD), base64(NEW)]);
    const five = Array.from({ length: 5 }, () => base64(randomBytes(32))).join(',');
    const tooMany = () =>
      loadMasterKeys({
        env: { [MASTER_KEY_ENV]: base64(NEW), [MASTER_KEY_DECRYPT_ONLY_ENV]: five },
        dataDir: null,
      });
    expect(tooMany).toThrow(ConfigError);
    expect(tooMany).toThrow(/at most 4/);
    expect(
      () =>
        new Keyring({
          current: NEW,
          decryptOnly: five.split(',').map((text) => Buffer.from(text, 'base64')),
        }),
    ).toThrow(/at most 4/);
  });

  it('names a malformed decrypt-only key by its place, never by its text', () => {
    const bad = `${base64(OLD).slice(0, 20)}!!`;
    let error: unknown;
    try {
      loadMasterKeys({
        env: {
          [MASTER_KEY_ENV]: base64(NEW),
          [MASTER_KEY_DECRYPT_ONLY_ENV]: `${base64(OLD)},${bad}`,
        },
        dataDir: null,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(`${MASTER_KEY_DECRYPT_ONLY_ENV}: key 2 of 2`);
    for (const secret of [bad, base64(OLD), base64(NEW), base64(OLD).slice(0, 20)]) {
      expect(message).not.toContain(secret);
    }
  });

  it('rotates the embedded key file: new master.key, old one kept as master.key.previous until the end, resumable', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-rotation-'));
    const keyPath = join(dataDir, MASTER_KEY_FILE);
    const previousPath = join(dataDir, PREVIOUS_MASTER_KEY_FILE);
    expect(() => beginMasterKeyFileRotation(dataDir)).toThrow(ConfigError);
    const original = loadMasterKeys({ env: {}, dataDir });
    expect(original.decryptOnly).toEqual([]);

    expect(beginMasterKeyFileRotation(dataDir)).toEqual({ resumed: false });
    const rotated = loadMasterKeys({ env: {}, dataDir });
    expect(rotated.current.equals(original.current)).toBe(false);
    expect(rotated.decryptOnly.map(base64)).toEqual([base64(original.current)]);
    expect([statSync(keyPath).mode & 0o777, statSync(previousPath).mode & 0o777]).toEqual([
      0o600, 0o600,
    ]);

    // Run again before it finished (a crash): the new key is kept, no third one is made.
    expect(beginMasterKeyFileRotation(dataDir)).toEqual({ resumed: true });
    expect(loadMasterKeys({ env: {}, dataDir }).current.equals(rotated.current)).toBe(true);

    // With SPENDGATE_MASTER_KEY set, the data folder's files are not the keys.
    expect(loadMasterKeys({ env: { [MASTER_KEY_ENV]: base64(NEW) }, dataDir }).decryptOnly).toEqual(
      [],
    );

    finishMasterKeyFileRotation(dataDir);
    expect(existsSync(previousPath)).toBe(false);
    expect(loadMasterKeys({ env: {}, dataDir }).decryptOnly).toEqual([]);
    finishMasterKeyFileRotation(dataDir);

    // Stopped after the old key was kept but before the new one was written: the two files
    // hold the same key, and the next run makes the new key.
    copyFileSync(keyPath, previousPath);
    const before = readFileSync(keyPath, 'utf8');
    expect(beginMasterKeyFileRotation(dataDir)).toEqual({ resumed: false });
    expect(readFileSync(keyPath, 'utf8')).not.toBe(before);
    expect(readFileSync(previousPath, 'utf8')).toBe(before);
  });
});
