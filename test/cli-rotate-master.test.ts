import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSync } from 'otplib';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../src/store/store.js';
import { usdc } from './support/store.js';
import { LOCAL_REDIS_URL } from './support/http.js';
import {
  listeningBase,
  callWithKey,
  serverDatabase,
  startCliProcess,
  stopAll,
  trackedRedisPrefixes,
  waitFor,
  type Child,
} from './support/processes.js';

/**
 * `spendgate keys rotate-master` with real processes. On PostgreSQL: servers keep revealing
 * cards while the command re-wraps under them, a server that still encrypts with the old key
 * (and reads the new one) and one on the new key read everything afterwards, a server on the
 * new key alone too, and one on the old key alone is refused at start; a second run has
 * nothing to do; a run killed midway is finished by the next; a secret written under the old
 * key during a run is reported. On the embedded database: the command makes the new key
 * itself. No key, wrapped key or secret appears in any process's output.
 */
const START_MS_MAX = 150_000;
const prefixes = trackedRedisPrefixes();
const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const NEXT = randomBytes(32).toString('base64');

/** Every output of every process, searched for secrets at the end of each test. */
const outputs: string[] = [];

afterAll(async () => {
  await stopAll();
  await prefixes.forget();
});

async function cli(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = startCliProcess(args, { LOG_LEVEL: 'info', ...env });
  const { code } = await child.exited;
  outputs.push(child.output());
  return { code, output: child.output() };
}

/** `spendgate serve --role api`, once it listens; its base URL. */
async function serve(env: Record<string, string>): Promise<{ child: Child; base: string }> {
  const child = startCliProcess(['serve', '--role', 'api'], {
    PORT: '0',
    LOG_LEVEL: 'info',
    REDIS_URL: LOCAL_REDIS_URL,
    // The reveals below run as fast as they can, well past a test key's 25 a second.
    RATE_LIMIT_TEST_PER_SECOND: '1000000',
    ...env,
  });
  return { child, base: await listeningBase(child, START_MS_MAX) };
}

async function stop(server: { child: Child }): Promise<void> {
  await server.child.stop('SIGTERM');
  outputs.push(server.child.output());
}

const call = callWithKey;

async function newCard(base: string, key: string): Promise<{ id: string; number: string }> {
  const vault = await call(base, key, 'POST', '/v1/vaults', {
    name: 'Ops',
    currency: 'USDC',
    network: 'solana',
    initialDeposit: 100,
  });
  expect(vault.status).toBe(201);
  const card = await call(base, key, 'POST', '/v1/cards', {
    vaultId: vault.body.id,
    cardholderName: 'Ada Lovelace',
  });
  expect(card.status).toBe(201);
  const id = card.body.id as string;
  return { id, number: await reveal(base, key, id) };
}

async function reveal(base: string, key: string, cardId: string): Promise<string> {
  const revealed = await call(base, key, 'POST', `/v1/cards/${cardId}/reveal`);
  expect(revealed.status, JSON.stringify(revealed.body)).toBe(200);
  return revealed.body.number as string;
}

/** The ciphertexts under the master key, as stored now. */
async function wrappedSecrets(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ token: string }>(
      `SELECT data_key_wrapped AS token FROM vaults
       UNION ALL SELECT secret_enc FROM webhook_endpoints
       UNION ALL SELECT two_factor_secret_enc FROM accounts WHERE two_factor_secret_enc IS NOT NULL`,
    );
    return rows.map((row) => row.token);
  } finally {
    await client.end();
  }
}

function expectNoSecretIn(texts: readonly string[], secrets: readonly string[]): void {
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(10);
    for (const text of texts) expect(text.includes(secret), 'a secret in the output').toBe(false);
  }
}

describe('spendgate keys rotate-master on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  const redisPrefix = prefixes.next();
  const env = (key: string, decryptOnly = '') => ({
    DATABASE_URL: database.url,
    SPENDGATE_MASTER_KEY: key,
    SPENDGATE_MASTER_KEY_DECRYPT_ONLY: decryptOnly,
    REDIS_PREFIX: redisPrefix,
  });
  const stores: Store[] = [];
  /** A store in this process, as a server with these keys would open it. */
  const storeWith = async (key: string, decryptOnly: string[] = []) => {
    const store = await openStore({
      client: createPgClient({ connectionString: database.url, connectionsMax: 2 }),
      masterKey: Buffer.from(key, 'base64'),
      decryptOnlyMasterKeys: decryptOnly.map((text) => Buffer.from(text, 'base64')),
    });
    stores.push(store);
    return store;
  };
  const secrets: string[] = [OLD, NEW, NEXT];

  afterAll(async () => {
    await stopAll();
    await Promise.all(stores.map((store) => store.close()));
    await database.drop();
  });

  it('re-wraps while servers on the old and on the new key reveal cards, and the old key can then go', async () => {
    database = await serverDatabase();
    const created = await cli(
      ['keys', 'create', '--account', 'acme', '--mode', 'test', '--create-account'],
      env(OLD),
    );
    expect(created.code, created.output).toBe(0);
    const key = /^sk_test_[A-Za-z0-9_-]+$/m.exec(created.output)?.[0] ?? '';
    const other = await cli(
      ['keys', 'create', '--account', 'guarded', '--mode', 'test', '--create-account'],
      env(OLD),
    );
    const guardedKey = /^sk_test_[A-Za-z0-9_-]+$/m.exec(other.output)?.[0] ?? '';

    // Before: one server on the old key alone makes a card, a webhook endpoint and a
    // two-factor enrolment, all under the old key.
    const first = await serve(env(OLD));
    const oldCard = await newCard(first.base, key);
    const webhook = await call(first.base, key, 'POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['*'],
    });
    expect(webhook.status).toBe(201);
    const enrolment = await call(first.base, guardedKey, 'POST', '/v1/account/two-factor');
    expect(enrolment.status).toBe(200);
    const twoFactorSecret = enrolment.body.secret as string;
    secrets.push(
      oldCard.number,
      webhook.body.secret as string,
      twoFactorSecret,
      ...(await wrappedSecrets(database.url)),
    );

    // Restarts: every process reads the new key (still encrypting with the old), then every
    // process encrypts with the new key (still reading the old).
    const onOld = await serve(env(OLD, NEW));
    await stop(first);
    const onNew = await serve(env(NEW, OLD));
    const newCardMade = await newCard(onNew.base, key);
    secrets.push(newCardMade.number);
    expect(await reveal(onOld.base, key, newCardMade.id)).toBe(newCardMade.number);

    // The rotation, one row a transaction, while both servers reveal both cards.
    const statuses = new Set<number>();
    let rotating = true;
    const revealing = (async () => {
      for (let round = 0; rotating && round < 10_000; round++) {
        for (const server of [onOld, onNew]) {
          for (const card of [oldCard, newCardMade]) {
            const revealed = await call(server.base, key, 'POST', `/v1/cards/${card.id}/reveal`);
            statuses.add(revealed.status);
            if (revealed.body.number !== card.number) statuses.add(-1);
          }
        }
      }
    })();
    const rotation = await cli(['keys', 'rotate-master', '--batch-size', '1'], env(NEW, OLD));
    rotating = false;
    await revealing;
    expect([...statuses]).toEqual([200]);
    expect(rotation.code, rotation.output).toBe(0);
    expect(rotation.output).toContain('vault data keys: 2 checked, 1 re-wrapped\n');
    expect(rotation.output).toContain('webhook signing secrets: 1 checked, 1 re-wrapped\n');
    expect(rotation.output).toContain('two-factor secrets: 1 checked, 1 re-wrapped\n');
    expect(rotation.output).toContain('every secret is under SPENDGATE_MASTER_KEY');

    // After: both servers still reveal both cards.
    for (const server of [onOld, onNew]) {
      for (const card of [oldCard, newCardMade]) {
        expect(await reveal(server.base, key, card.id)).toBe(card.number);
      }
    }
    await stop(onOld);
    await stop(onNew);

    // The new key alone reads every secret: cards, the two-factor secret (a code from it turns
    // two-factor on) and the webhook signing secret.
    const newOnly = await serve(env(NEW));
    for (const card of [oldCard, newCardMade]) {
      expect(await reveal(newOnly.base, key, card.id)).toBe(card.number);
    }
    const code = generateSync({ secret: twoFactorSecret, epoch: Math.floor(Date.now() / 1000) });
    const verified = await call(newOnly.base, guardedKey, 'POST', '/v1/account/two-factor/verify', {
      code,
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(await (await storeWith(NEW)).webhookSecret(webhook.body.id as string)).toBe(
      webhook.body.secret,
    );
    await stop(newOnly);

    // The old key alone opens nothing now: such a server is refused at its start, in one line.
    const oldOnly = startCliProcess(['serve', '--role', 'api'], {
      ...env(OLD),
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    expect((await oldOnly.exited).code).toBe(1);
    outputs.push(oldOnly.output());
    const said = oldOnly
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('{'));
    expect(said).toEqual([
      expect.stringMatching(
        /^spendgate: the master key \(SPENDGATE_MASTER_KEY, or master\.key in the data folder\) does not open vault vlt_\w+'s data key/,
      ),
    ]);

    // Run again: nothing left to do.
    const again = await cli(['keys', 'rotate-master'], env(NEW, OLD));
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain('vault data keys: 2 checked, 0 re-wrapped\n');

    secrets.push(...(await wrappedSecrets(database.url)));
    expectNoSecretIn(outputs, secrets);
  }, 900_000);

  it('finishes on the next run a rotation killed midway, every secret readable in between', async () => {
    const store = await storeWith(NEW);
    const { id: accountId } = await store.findOrCreateAccount('acme');
    const scope = { accountId, mode: 'test' as const };
    for (let index = 0; index < 4; index++) {
      const { vault } = await store.createVault(scope, {
        name: `vault ${index}`,
        currency: 'USDC',
        metadata: {},
        initialDeposit: usdc('10'),
      });
      await store.createCard(scope, { vaultId: vault.id, cardholderName: 'Ada', metadata: {} });
    }
    const before = await vaultKeys(database.url);
    expect(before.length).toBe(6);
    const blocked = before[4]?.id ?? '';
    // A transaction of the test's own holds the fifth vault: the run waits there, after
    // committing the four before it, one a transaction.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM vaults WHERE id = $1 FOR UPDATE', [blocked]);
    const run = startCliProcess(['keys', 'rotate-master', '--batch-size', '1'], {
      ...env(NEXT, NEW),
      LOG_LEVEL: 'info',
    });
    try {
      await waitFor(
        async () => changed(before, await vaultKeys(database.url)) === 4,
        120_000,
        () => `the first four vaults were not re-wrapped:\n${run.output()}`,
      );
      expect(await run.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      outputs.push(run.output());
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(changed(before, await vaultKeys(database.url))).toBe(4);

    // In between, a process with both keys reads every card, whichever key wraps its vault.
    const both = await storeWith(NEXT, [NEW]);
    const { rows: cards } = await both.client.query<{ id: string }>('SELECT id FROM cards');
    expect(cards.length).toBe(6);
    const acmeCards = await both.listCards(scope, { limit: 100 });
    for (const card of acmeCards.data) {
      expect((await both.revealCard(scope, card.id)).number).toMatch(/^[0-9]{16}$/);
    }

    const resumed = await cli(['keys', 'rotate-master', '--batch-size', '2'], env(NEXT, NEW));
    expect(resumed.code, resumed.output).toBe(0);
    expect(resumed.output).toContain('vault data keys: 6 checked, 2 re-wrapped\n');
    expect(resumed.output).toContain('webhook signing secrets: 1 checked, 1 re-wrapped\n');
    expect(changed(before, await vaultKeys(database.url))).toBe(6);
    secrets.push(...(await wrappedSecrets(database.url)));
    expectNoSecretIn(outputs, secrets);
  }, 600_000);

  it('says so when a process wrote under an old key during the run, and exits 1', async () => {
    // The run is held on the two-factor secrets (a row lock of the test's own), after it is
    // done with the vaults; a process still encrypting with the old key writes a secret then.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(
      'SELECT id FROM accounts WHERE two_factor_secret_enc IS NOT NULL FOR UPDATE',
    );
    const run = startCliProcess(['keys', 'rotate-master'], {
      ...env(NEXT, NEW),
      LOG_LEVEL: 'info',
    });
    try {
      await waitFor(
        () => run.output().includes('re-wrapping under the current master key'),
        120_000,
        () => `the run did not start:\n${run.output()}`,
      );
      // The run is now held on the two-factor row: let the vault pass finish first.
      await waitFor(
        async () => (await holderWaiters(database.url)) > 0,
        120_000,
        () => `the run never reached the two-factor secrets:\n${run.output()}`,
      );
      // It writes a webhook signing secret, which reads no other secret first. (A vault would
      // read the deposit seed, already under NEXT since the run before: a process holding only
      // NEW cannot make one, and fails loudly rather than writing under the old key.)
      const stillOnNew = await storeWith(NEW);
      const { id: accountId } = await stillOnNew.findOrCreateAccount('acme');
      await stillOnNew.createWebhookEndpoint(
        { accountId, mode: 'test' },
        { url: 'http://127.0.0.1:9/late', events: ['*'], description: null },
      );
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const { code } = await run.exited;
    outputs.push(run.output());
    expect(code, run.output()).toBe(1);
    expect(run.output()).toContain(
      '1 secret was written under an old key while this ran: a process still encrypts with it.',
    );
    expectNoSecretIn(outputs, secrets);
  }, 600_000);
});

/** Vault ids and wrapped keys, by id. */
async function vaultKeys(url: string): Promise<{ id: string; wrapped: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; wrapped: string }>(
      'SELECT id, data_key_wrapped AS wrapped FROM vaults ORDER BY id',
    );
    return rows;
  } finally {
    await client.end();
  }
}

function changed(
  before: readonly { id: string; wrapped: string }[],
  now: readonly { id: string; wrapped: string }[],
): number {
  const was = new Map(before.map((row) => [row.id, row.wrapped]));
  return now.filter((row) => was.has(row.id) && was.get(row.id) !== row.wrapped).length;
}

/** Sessions of this database waiting for a lock. */
async function holderWaiters(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

describe('spendgate keys rotate-master on the embedded database', () => {
  it('makes the new key itself, and the data folder opens with it alone afterwards', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'spendgate-data-'));
    const env = {
      SPENDGATE_DATA_DIR: dataDir,
      DATABASE_URL: '',
      SPENDGATE_MASTER_KEY: '',
      REDIS_PREFIX: prefixes.next(),
    };
    const first = await serve(env);
    const key = /\n {2}(sk_test_[A-Za-z0-9_-]+)\n/.exec(first.child.output())?.[1] ?? '';
    const card = await newCard(first.base, key);
    await stop(first);
    const keyPath = join(dataDir, 'master.key');
    const oldKey = readFileSync(keyPath, 'utf8').trim();

    const rotation = await cli(['keys', 'rotate-master'], env);
    expect(rotation.code, rotation.output).toBe(0);
    expect(rotation.output).toContain(`spendgate: a new master.key is in ${dataDir}`);
    expect(rotation.output).toContain('vault data keys: 1 checked, 1 re-wrapped\n');
    expect(rotation.output).toContain(`every secret is under the new key in ${dataDir}/master.key`);
    const newKey = readFileSync(keyPath, 'utf8').trim();
    expect(newKey).not.toBe(oldKey);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dataDir, 'master.key.previous'))).toBe(false);

    const again = await serve(env);
    expect(await reveal(again.base, key, card.id)).toBe(card.number);
    await stop(again);
    expectNoSecretIn(outputs, [oldKey, newKey, card.number]);
  }, 600_000);
});
