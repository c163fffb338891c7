import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReservesArgs, reservesTable } from '../src/cli/reserves.js';
import { UsageError } from '../src/cli/keys.js';
import { Decimal } from '../src/core/index.js';
import { startLocalSolana, type LocalSolana } from '../src/local-chain/index.js';
import { keypairSigner } from '../src/solana/signer.js';
import { checkInvariants } from '../src/store/invariants.js';
import { createPgClient } from '../src/store/sql/pg-client.js';
import { openStore, type OpenedStore, type StoredReserveRun } from '../src/store/store.js';
import { ReserveReconciler } from '../src/workers/reserves.js';
import { SILENT_LOG } from './support/http.js';
import { serverDatabase, startCliProcess, stopAll, waitFor } from './support/processes.js';

/**
 * `spendgate reserves`: its arguments, its table (every term, the state, the waiting
 * transfers), and the command itself against a real database whose reserves a worker (a
 * ReserveReconciler on the local chain, in this process) reconciles: `--run` is answered by
 * that worker within its round, and `--watch` redraws until Ctrl-C, then exits 0.
 */

const RUN: StoredReserveRun = {
  id: 'rsv_0',
  ranAtMs: Date.UTC(2026, 10, 24, 12, 0, 0),
  mode: 'test',
  currency: 'USDC',
  treasuryAddress: 'ata',
  slot: 5,
  treasuryBalance: '4.000000000',
  unsweptDeposits: '1.500000000',
  owed: '9.000000000',
  inFlight: '2.000000000',
  inFlightLanded: '1.000000000',
  inFlightCount: 2,
  reserves: '5.500000000',
  liabilities: '8.000000000',
  shortfall: '2.500000000',
  ratio: '0.687500000',
  short: true,
};

describe('spendgate reserves: arguments and table', () => {
  it('reads its flags, bounds the refresh, and refuses anything else', () => {
    expect(parseReservesArgs([])).toEqual({ run: false, watch: false, everyMs: 5_000 });
    expect(parseReservesArgs(['--run', '--watch', '--every', '60'])).toEqual({
      run: true,
      watch: true,
      everyMs: 60_000,
    });
    for (const wrong of [
      ['--every', '5'],
      ['--watch', '--every', '0'],
      ['--watch', '--every', '61'],
      ['--watch', '--every', '1.5'],
      ['--watch', '--every'],
      ['--run', '--run'],
      ['--now'],
    ]) {
      expect(() => parseReservesArgs(wrong), wrong.join(' ')).toThrow(UsageError);
    }
  });

  it('shows every term at the currency’s scale, the state and the transfers waiting', () => {
    const lines = reservesTable(
      [RUN, { ...RUN, mode: 'live', currency: 'SOL', short: false, shortfall: '0.000000000' }],
      [{ mode: 'test', currency: 'USDC', count: 3 }],
      RUN.ranAtMs + 42_000,
    );
    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      'MODE',
      'CURRENCY',
      'STATE',
      'RATIO',
      'SHORTFALL',
      'TREASURY',
      'UNSWEPT',
      'OWED',
      'IN FLIGHT',
      'LANDED',
      'WAITING',
      'RAN',
    ]);
    expect(lines[1]?.trim().split(/\s+/)).toEqual([
      'test',
      'USDC',
      'SHORT',
      '0.687500000',
      '2.500000',
      '4.000000',
      '1.500000',
      '9.000000',
      '2.000000',
      '1.000000',
      '3',
      '42s',
      'ago',
    ]);
    // Covered: nothing waits on reserves (a pending transfer there is only queued).
    expect(lines[2]?.trim().split(/\s+/).slice(0, 5)).toEqual([
      'live',
      'SOL',
      'covered',
      '0.687500000',
      '0.000000000',
    ]);
    expect(lines[2]?.trim().split(/\s+/).at(-3)).toBe('0');
    expect(lines.join('\n')).toContain('spendgate reserves --run');
  });

  it('says how to get a first run when there is none', () => {
    expect(reservesTable([], [], 0).join('\n')).toContain('--run');
  });
});

describe('spendgate reserves, the command', () => {
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: OpenedStore;
  let chain: LocalSolana;
  let worker: ReserveReconciler;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await serverDatabase();
    store = await openStore({
      client: createPgClient({ connectionString: database.url }),
      masterKey: randomBytes(32),
    });
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    const account = await store.findOrCreateAccount('reserves-cli');
    await store.createVault(
      { accountId: account.id, mode: 'test' },
      { name: 'Ops', currency: 'SOL', metadata: {}, initialDeposit: new Decimal('2') },
    );
    worker = new ReserveReconciler(
      store,
      {
        test: {
          connection: chain.connection(),
          signer: keypairSigner(chain.treasury),
          usdcMint: chain.usdcMint,
        },
        live: null,
      },
      SILENT_LOG,
      // Runs only when asked (the interval is longer than the test), looked for every 100 ms.
      { everyMs: 3_600_000, roundMs: 100 },
    );
    await worker.runOnce();
    worker.start();
    env = {
      DATABASE_URL: database.url,
      SPENDGATE_MASTER_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'info',
    };
  });

  afterAll(async () => {
    expect(await checkInvariants(store.client)).toEqual([]);
    await stopAll();
    await worker.stop();
    await chain.close();
    await store.close();
    await database.drop();
  });

  it('--run: a worker answers, and the table shows its run', async () => {
    const before = await store.latestReserveRuns(['SOL']);
    const child = startCliProcess(['reserves', '--run'], env);
    const { code } = await child.exited;
    expect(code, child.output()).toBe(0);
    const after = await store.latestReserveRuns(['SOL']);
    expect(after[0]?.id).not.toBe(before[0]?.id);
    const row = child
      .output()
      .split('\n')
      .find((line) => line.startsWith('test  SOL'));
    expect(row?.trim().split(/\s+/).slice(0, 3)).toEqual(['test', 'SOL', 'covered']);
    expect(row?.trim().split(/\s+/)[7]).toBe('2.000000000');
  });

  it('--watch: redraws until Ctrl-C, then exits 0', async () => {
    const child = startCliProcess(['reserves', '--watch', '--every', '1'], env);
    await waitFor(
      () => child.output().includes('Ctrl-C stops'),
      60_000,
      () => `no redraw:\n${child.output()}`,
    );
    const { code } = await child.stop('SIGINT');
    expect(code, child.output()).toBe(0);
    expect(child.output()).toContain('\x1b[H\x1b[2J');
  });
});
