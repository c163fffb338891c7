import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisPrefix } from '../support/http.js';
import {
  listeningBase,
  forgetPrefixes,
  serverDatabase,
  startCliProcess,
  stopAll,
  type Child,
} from '../support/processes.js';

/**
 * Live money from nothing, with real processes as a user runs them: keys
 * made by `spendgate keys create`, requests to `spendgate serve --role api` on PostgreSQL. A
 * live key cannot create a vault with money in it (nothing on chain backs it) nor simulate a
 * deposit; a test key can do both.
 */
const START_MS_MAX = 150_000;

describe('a live vault starts empty (real processes)', () => {
  const redisPrefix = testRedisPrefix();
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let env: Record<string, string>;
  let server: Child;
  let base = '';
  const keys = { live: '', test: '' };

  const cli = async (args: string[]): Promise<string> => {
    const child = startCliProcess(args, env);
    const { code } = await child.exited;
    expect(code, child.output()).toBe(0);
    return child.output();
  };
  const post = async (key: string, path: string, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as {
        id: string;
        balance: { ledger: string };
        error?: { code: string; param?: string; message: string };
      },
    };
  };

  beforeAll(async () => {
    database = await serverDatabase();
    env = {
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: redisPrefix,
      PORT: '0',
      LOG_LEVEL: 'info',
    };
    for (const mode of ['live', 'test'] as const) {
      const output = await cli([
        'keys',
        'create',
        '--account',
        'acme',
        '--mode',
        mode,
        ...(mode === 'live' ? ['--create-account'] : []),
      ]);
      keys[mode] = new RegExp(`^sk_${mode}_[A-Za-z0-9_-]{32}$`, 'm').exec(output)?.[0] ?? '';
      expect(keys[mode], output).not.toBe('');
    }
    server = startCliProcess(['serve', '--role', 'api'], env);
    base = await listeningBase(server, START_MS_MAX);
  }, START_MS_MAX + 60_000);

  afterAll(async () => {
    await stopAll();
    await database.drop();
    await forgetPrefixes([redisPrefix]);
  });

  it('refuses a live initialDeposit above 0 and a live simulated deposit; a test key does both', async () => {
    const vault = { name: 'Treasury', currency: 'USDC', network: 'solana' };
    const refused = await post(keys.live, '/v1/vaults', { ...vault, initialDeposit: '100' });
    expect([refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
      400,
      'parameter_invalid',
      'initialDeposit',
    ]);
    expect(refused.body.error?.message).toMatch(/transfer from another vault/);
    const empty = await post(keys.live, '/v1/vaults', vault);
    expect([empty.status, empty.body.balance.ledger]).toEqual([201, '0.00']);
    const simulated = await post(keys.live, '/v1/simulate/deposits', {
      vaultId: empty.body.id,
      amount: '100',
    });
    expect([simulated.status, simulated.body.error?.code]).toEqual([400, 'parameter_invalid']);
    const listed = (await (
      await fetch(`${base}/v1/vaults`, { headers: { authorization: `Bearer ${keys.live}` } })
    ).json()) as { data: { balance: { ledger: string } }[] };
    expect(listed.data.map((each) => each.balance.ledger)).toEqual(['0.00']);

    const played = await post(keys.test, '/v1/vaults', { ...vault, initialDeposit: '100' });
    expect([played.status, played.body.balance.ledger]).toEqual([201, '100.00']);
    const deposited = await post(keys.test, '/v1/simulate/deposits', {
      vaultId: played.body.id,
      amount: '5',
    });
    expect(deposited.status).toBe(201);
  });
});
