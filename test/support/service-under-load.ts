import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { Decimal } from '../../src/core/index.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore } from '../../src/store/store.js';
import { MERCHANT, networkId } from './authorize.js';
import { LOCAL_REDIS_URL, testRedisPrefix } from './http.js';
import {
  callWithKey,
  listeningBase,
  startCliProcess,
  stopAll,
  waitFor,
  type Child,
} from './processes.js';
import { startReceiver, type Receiver } from './receiver.js';

/*
 * A real `spendgate serve --role all` on a PostgreSQL of the test's own that the test breaks
 * (crashes, fails over, fills its disk), with a steady load of authorizations and a webhook
 * receiver; and the checks such a test makes after: every answer recorded as given, every
 * event delivered. One per test file (test/fleet/postgres-*.test.ts).
 */

const START_MS_MAX = 60_000;
const SETTLED_MS_MAX = 60_000;
/** Clients of the load, each sending one authorization at a time. */
const CLIENTS = 6;

export interface Answer {
  readonly networkTransactionId: string;
  readonly status: number;
  /** An answer other than 200: its body, for the failure's message. */
  readonly body?: Record<string, unknown>;
  readonly approved: boolean;
  readonly standIn: boolean;
}

export interface LoadedAccount {
  readonly key: string;
  readonly accountId: string;
  readonly vaultId: string;
  readonly cardId: string;
}

export class ServiceUnderLoad {
  readonly masterKey = randomBytes(32).toString('base64');
  readonly journalDir = mkdtempSync(join(tmpdir(), 'sg-under-load-journal-'));
  readonly redisPrefix = testRedisPrefix();
  readonly #stores: OpenedStore[] = [];
  /** Events of the account before its endpoint was made: never owed to it. */
  readonly #beforeEndpoint = new Set<string>();
  #receiver: Receiver | null = null;
  readonly #children: Child[] = [];

  async storeOn(url: string): Promise<OpenedStore> {
    const store = await openStore({
      client: createPgClient({ connectionString: url, connectionsMax: 4 }),
      masterKey: Buffer.from(this.masterKey, 'base64'),
    });
    this.#stores.push(store);
    return store;
  }

  /** `spendgate serve --role all` on the database at `url`; its base URL once it listens. */
  async serve(url: string): Promise<[Child, string]> {
    const child = startCliProcess(['serve', '--role', 'all'], {
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: url,
      SPENDGATE_MASTER_KEY: this.masterKey,
      SPENDGATE_MODES: 'test',
      REDIS_URL: LOCAL_REDIS_URL,
      REDIS_PREFIX: this.redisPrefix,
      RATE_LIMIT_TEST_PER_SECOND: '100000',
      AUTHORIZE_BUDGET_MS: '300',
      STAND_IN_JOURNAL_DIR: this.journalDir,
      // An address never called: no transfer is made here, so no local Solana runtime starts.
      SOLANA_TEST_RPC_URL: 'http://127.0.0.1:9',
      WEBHOOK_RETRY_DELAYS_MS: '200,500,1000,1000,1000,1000',
    });
    this.#children.push(child);
    return [child, await listeningBase(child, START_MS_MAX)];
  }

  /** The services' log lines that name `text` (or stand-in records), for a failure's message. */
  #logLinesAbout(text: string): string[] {
    return this.#children
      .flatMap((child) => child.output().split('\n'))
      .filter((line) => line.includes(text) || line.includes('stand-in'))
      .slice(-20);
  }

  /** An account with a key, a funded vault and its card, made through `store`. */
  async account(store: OpenedStore, name: string): Promise<LoadedAccount> {
    const account = await store.findOrCreateAccount(name);
    const scope = { accountId: account.id, mode: 'test' as const };
    const { key } = await store.createApiKey({ ...scope, scopes: [] });
    const { vault } = await store.createVault(scope, {
      name,
      currency: 'USDC',
      metadata: {},
      initialDeposit: new Decimal('100000'),
    });
    const card = await store.createCard(scope, {
      vaultId: vault.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    return { key, accountId: account.id, vaultId: vault.id, cardId: card.id };
  }

  /** A webhook endpoint of the account's for every event, pointed at the test's receiver. */
  async subscribe(store: OpenedStore, base: string, account: LoadedAccount): Promise<void> {
    this.#receiver ??= await startReceiver();
    const { rows } = await store.client.query<{ id: string }>(
      'SELECT id FROM outbox_events WHERE account_id = $1',
      [account.accountId],
    );
    for (const row of rows) this.#beforeEndpoint.add(row.id);
    const endpoint = await callWithKey(base, account.key, 'POST', '/v1/webhooks', {
      url: this.#receiver.url,
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
    this.#receiver.secret = String(endpoint.body['secret']);
  }

  async close(): Promise<void> {
    await stopAll();
    await Promise.all(this.#stores.map((store) => store.close().catch(() => undefined)));
    await this.#receiver?.close();
    rmSync(this.journalDir, { recursive: true, force: true });
  }

  /** Authorizations of 1.00 from CLIENTS clients, one at a time each, until `until` settles. */
  async load(base: string, key: string, cardId: string, until: Promise<unknown>) {
    let going = true;
    void until.finally(() => {
      going = false;
    });
    const answers: Answer[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (going) {
          const networkTransactionId = networkId();
          const answer = await callWithKey(base, key, 'POST', '/v1/authorizations', {
            cardId,
            amount: '1',
            currency: 'USDC',
            merchant: MERCHANT,
            networkTransactionId,
          });
          answers.push({
            networkTransactionId,
            status: answer.status,
            approved: answer.body['approved'] === true,
            standIn: answer.body['standIn'] === true,
          });
        }
      }),
    );
    return answers;
  }

  /**
   * The answers whose record differs from them, once every answer's record says what was
   * answered or the bound has passed: a stand-in answer whose late decision committed the other
   * way is set right by the advice that follows it, a moment later.
   */
  async unlikeTheirRecords(store: OpenedStore, vaultId: string, answers: Answer[]) {
    let unlike: (Answer & { recorded: string | null; log: string[] })[] = [];
    const settled = async () => {
      const { rows } = await store.client.query<{
        network_transaction_id: string;
        status: string;
      }>(
        `SELECT network_transaction_id, status FROM transactions
         WHERE vault_id = $1 AND type = 'card_authorization'`,
        [vaultId],
      );
      const records = new Map(rows.map((row) => [row.network_transaction_id, row.status]));
      unlike = answers
        .filter((answer) => {
          const status = records.get(answer.networkTransactionId);
          return status === undefined || (status === 'pending') !== answer.approved;
        })
        .map((answer) => ({
          ...answer,
          recorded: records.get(answer.networkTransactionId) ?? null,
          log: this.#logLinesAbout(answer.networkTransactionId),
        }));
      return unlike.length === 0;
    };
    await waitFor(settled, SETTLED_MS_MAX, () => 'every answer recorded as given').catch(
      () => undefined,
    );
    return unlike;
  }

  async everyEventDelivered(store: OpenedStore, accountId: string): Promise<void> {
    let missing: string[] = [];
    try {
      await waitFor(
        async () => {
          const { rows } = await store.client.query<{ id: string }>(
            'SELECT id FROM outbox_events WHERE account_id = $1',
            [accountId],
          );
          const arrived = new Set(this.#receiver?.received.map((delivery) => delivery.id));
          missing = rows
            .map((row) => row.id)
            .filter((id) => !arrived.has(id) && !this.#beforeEndpoint.has(id));
          return missing.length === 0;
        },
        SETTLED_MS_MAX,
        () => `${missing.length} events undelivered`,
      );
    } catch (error) {
      throw new Error(
        `${String(error)}: ${JSON.stringify(await this.#whereAre(store, missing.slice(0, 3)))}`,
        { cause: error },
      );
    }
  }

  /** Where undelivered events stand, for the failure's message. */
  async #whereAre(store: OpenedStore, ids: string[]) {
    const read = async (text: string) => (await store.client.query(text, [ids])).rows;
    return {
      events: await read('SELECT id, type, created_at FROM outbox_events WHERE id = ANY($1)'),
      unrelayed: await read('SELECT * FROM outbox_unrelayed WHERE id = ANY($1)'),
      owed: await read('SELECT * FROM webhook_deliveries_owed WHERE event_id = ANY($1)'),
      deliveries: await read('SELECT * FROM webhook_deliveries WHERE event_id = ANY($1)'),
    };
  }
}
