import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisWritePositions } from '../../src/cli/write-positions.js';
import { Decimal, type Scope } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore, type ReplicaEvent } from '../../src/store/store.js';
import { MERCHANT, networkId } from '../support/authorize.js';
import { LOCAL_REDIS_URL } from '../support/http.js';
import { startReplicaPair, type ReplicaPair } from '../support/pg-replica.js';
import { freePort, trackedRedisPrefixes } from '../support/processes.js';

/*
 * The reads that may lag, on a real primary/replica pair (test/support/pg-replica.ts). With the
 * replica's replay paused, what it serves is frozen: a list that does not show a row written
 * on the primary after the pause was served by the replica; one that shows it, by the primary.
 * Two stores on the pair share their write positions through Redis, as two API processes do.
 */

const PAGE = { limit: 100 } as const;

describe('reads from a streaming replica (DATABASE_READ_URL)', () => {
  const prefixes = trackedRedisPrefixes();
  const redisPrefix = prefixes.next();
  const masterKey = randomBytes(32);
  let pair: ReplicaPair;
  let redis: Redis;
  /** Two stores with the replica, as two API processes; `plain` writes without positions. */
  let first: OpenedStore;
  let second: OpenedStore;
  let plain: OpenedStore;
  const events: ReplicaEvent[] = [];
  let urls: { readonly primary: string; readonly replica: string };

  beforeAll(async () => {
    pair = await startReplicaPair();
    const database = `sg_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pair.primaryUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    urls = pair.urlsOf(database);
    redis = new Redis(LOCAL_REDIS_URL, { maxRetriesPerRequest: 1 });
    const withReplica = () =>
      openStore({
        client: createPgClient({ connectionString: urls.primary }),
        masterKey,
        replica: {
          client: createPgClient({
            connectionString: urls.replica,
            replica: { connectTimeoutMs: 1_000 },
          }),
          positions: redisWritePositions(redis, redisPrefix),
        },
      });
    first = await withReplica();
    second = await withReplica();
    plain = await openStore({
      client: createPgClient({ connectionString: urls.primary }),
      masterKey,
    });
    first.observeReplicaReads((event) => events.push(event));
    second.observeReplicaReads((event) => events.push(event));
    await pair.waitCaughtUp();
  }, 180_000);

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await plain?.close();
    redis?.disconnect();
    await prefixes.forget();
    await pair?.stop();
  }, 60_000);

  /** The events since `from`, read-kind only, as `servedBy/reason`. */
  const readsSince = (from: number) =>
    events
      .slice(from)
      .map((event) => (event.kind === 'read' ? `${event.servedBy}/${event.reason}` : event.kind));

  const names = async (store: OpenedStore, scope: Scope) =>
    (await store.listVaults(scope, PAGE)).data.map((vault) => vault.name).sort();

  const newScope = async (): Promise<Scope> => {
    const { id } = await first.findOrCreateAccount(`acct-${randomBytes(4).toString('hex')}`);
    return { accountId: id, mode: 'test' };
  };

  const vaultOf = (store: OpenedStore, scope: Scope, name: string, deposit = '0') =>
    store.createVault(scope, {
      name,
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal(deposit),
    });

  it('reads an account it knows nothing of from the primary once, then from the replica', async () => {
    const scope = await newScope();
    const from = events.length;
    expect(await names(first, scope)).toEqual([]);
    await pair.waitCaughtUp();
    expect(await names(second, scope)).toEqual([]);
    expect(readsSince(from)).toEqual(['primary/position_unknown', 'replica/caught_up']);
  });

  describe('with the replica paused', () => {
    let scope: Scope;
    let cardId: string;
    let fundedLater: string;

    beforeAll(async () => {
      scope = await newScope();
      await vaultOf(first, scope, 'before');
      const empty = (await vaultOf(first, scope, 'empty')).vault;
      fundedLater = empty.id;
      cardId = (
        await first.createCard(scope, { vaultId: empty.id, cardholderName: 'Ada', metadata: {} })
      ).id;
      await pair.waitCaughtUp();
      await pair.pauseReplay();
      // Written on the primary by a store that keeps no positions: nothing tells the
      // routing about it, so a read the replica serves cannot show it.
      await vaultOf(plain, scope, 'unseen');
      await plain.deposit(scope, fundedLater, new Decimal('100'), {});
    }, 60_000);

    afterAll(async () => {
      await pair.resumeReplay();
    });

    it('serves the list of an account with no recent write from the replica, frozen at the pause', async () => {
      const from = events.length;
      expect(await names(first, scope)).toEqual(['before', 'empty']);
      expect(await names(second, scope)).toEqual(['before', 'empty']);
      expect(readsSince(from)).toEqual(['replica/caught_up', 'replica/caught_up']);
    });

    it('decides an authorization and answers balances on the primary', async () => {
      const outcome = await first.authorize(scope, {
        cardId,
        amount: new Decimal('80'),
        currency: 'USDC',
        merchant: { name: MERCHANT.name, mcc: MERCHANT.mcc, country: MERCHANT.country },
        networkTransactionId: networkId(),
      });
      // Approved only on the deposit made after the pause: the replica still has 0.
      expect(outcome.decision.approved).toBe(true);
      const vault = await second.getVault(scope, fundedLater);
      expect(vault.ledger.toFixed()).toBe('100');
      expect(vault.pending.toFixed()).toBe('80');
    });

    it("shows the caller's own write at once, through either store", async () => {
      await vaultOf(first, scope, 'mine');
      const from = events.length;
      // The replica has not replayed it: both stores read the primary, and see all of it.
      const all = ['before', 'empty', 'mine', 'unseen'];
      expect(await names(first, scope)).toEqual(all);
      expect(await names(second, scope)).toEqual(all);
      const transactions = await second.listTransactions(scope, PAGE);
      expect(transactions.data.some((row) => row.type === 'card_authorization')).toBe(true);
      expect(readsSince(from)).toEqual(['primary/behind', 'primary/behind', 'primary/behind']);
    });

    it('holds an account first read after the pause to the primary until the replica reaches it', async () => {
      const other = await newScope();
      const from = events.length;
      await names(first, other);
      // Its position was set from the primary's, past what the paused replica has replayed.
      expect(await names(second, other)).toEqual([]);
      expect(readsSince(from)).toEqual(['primary/position_unknown', 'primary/behind']);
    });
  });

  it('catches up once replay resumes, and then serves what it missed', async () => {
    const scope = await newScope();
    await vaultOf(first, scope, 'late');
    await pair.waitCaughtUp();
    const from = events.length;
    expect(await names(second, scope)).toEqual(['late']);
    expect(readsSince(from)).toEqual(['replica/caught_up']);
    const violations = await checkInvariants(first.client);
    expect(violations).toEqual([]);
  });

  it("replays a queued backtest's authorizations from the replica", async () => {
    const scope = await newScope();
    const { vault } = await vaultOf(first, scope, 'backtested', '1000');
    const card = await first.createCard(scope, {
      vaultId: vault.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    const buy = (store: OpenedStore) =>
      store.authorize(scope, {
        cardId: card.id,
        amount: new Decimal('10'),
        currency: 'USDC',
        merchant: { name: MERCHANT.name, mcc: MERCHANT.mcc, country: MERCHANT.country },
        networkTransactionId: networkId(),
      });
    await buy(first);
    const today = new Date().toISOString().slice(0, 10);
    const subject = { kind: 'vault', vaultId: vault.id } as const;
    const { backtest } = await first.createBacktest(scope, subject, {
      draft: { limits: [{ interval: 'allTime', count: 5 }] },
      startDate: today,
      endDate: today,
    });
    expect(backtest.result?.authorizations).toBe(1);
    await pair.waitCaughtUp();
    await pair.pauseReplay();
    try {
      await buy(plain);
      // Queued again by hand, its window reaching past the purchase just made on the primary,
      // so that a run from the primary would replay two.
      await first.client.query(
        `UPDATE backtests SET status = 'queued', result = NULL, completed_at = NULL, replayed = 0,
                              total = NULL, created_at = created_at + interval '1 hour'
         WHERE id = $1`,
        [backtest.id],
      );
      const from = events.length;
      expect(await first.runBacktest(backtest.id, { leaseMs: 10_000 })).toBe('completed');
      expect(readsSince(from)).toEqual(['replica/caught_up']);
      const run = await plain.getBacktest(scope, subject, backtest.id);
      expect([run.status, run.result?.authorizations]).toEqual(['completed', 1]);
    } finally {
      await pair.resumeReplay();
    }
  });

  it('reads the primary while Redis does not answer, and counts the positions it could not keep', async () => {
    // A Redis nobody listens on: each command fails at once, as with Redis down.
    const deadRedis = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    deadRedis.on('error', () => undefined);
    const blind = await openStore({
      client: createPgClient({ connectionString: urls.primary }),
      masterKey,
      replica: {
        client: createPgClient({
          connectionString: urls.replica,
          replica: { connectTimeoutMs: 1_000 },
        }),
        positions: redisWritePositions(deadRedis, redisPrefix),
      },
    });
    const seen: ReplicaEvent[] = [];
    blind.observeReplicaReads((event) => seen.push(event));
    try {
      const scope = await newScope();
      await vaultOf(blind, scope, 'written');
      expect(await names(blind, scope)).toEqual(['written']);
      expect(seen).toEqual([
        { kind: 'position_not_kept' },
        { kind: 'read', servedBy: 'primary', reason: 'positions_unavailable' },
      ]);
    } finally {
      await blind.close();
      deadRedis.disconnect();
    }
  });

  it('answers every list from the primary once the replica is down', async () => {
    const scope = await newScope();
    await vaultOf(first, scope, 'kept');
    await pair.waitCaughtUp();
    await pair.stopReplica();
    const from = events.length;
    expect(await names(first, scope)).toEqual(['kept']);
    expect((await first.listCards(scope, PAGE)).data).toEqual([]);
    const reads = readsSince(from);
    expect(reads).toEqual(['primary/replica_unavailable', 'primary/replica_unavailable']);
  });
});
