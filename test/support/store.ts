import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { Decimal, type CardRecord, type Scope, type VaultRecord } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
import type { CreateCardInput, CreateVaultInput } from '../../src/store/port/index.js';
import type { SqlClient } from '../../src/store/sql/client.js';
import { openStore, type OpenedStore as Store, type StoreOptions } from '../../src/store/store.js';
import type { TestDatabase } from './databases.js';

/** A clock tests move by hand: store operations read time only through it. */
export class TestClock {
  nowMs = Date.UTC(2026, 10, 18, 12, 0, 0);
  readonly now = (): number => this.nowMs;
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

export interface TestStore {
  readonly store: Store;
  readonly clock: TestClock;
  /** A new account with a test-mode scope. */
  scope(mode?: Scope['mode']): Promise<Scope>;
  /** A vault of `owner` funded with `deposit`: USDC, named 'Ops', no metadata, unless said. */
  vault(
    owner: Scope,
    deposit?: string | Decimal,
    fields?: Partial<Pick<CreateVaultInput, 'name' | 'currency' | 'metadata'>>,
  ): Promise<VaultRecord>;
  /** A card of `owner` on `vaultId`: Ada's, no metadata, unless said. */
  card(
    owner: Scope,
    vaultId: string,
    fields?: Partial<Pick<CreateCardInput, 'cardholderName' | 'metadata'>>,
  ): Promise<CardRecord>;
  /** Fails the test with the list of violated invariants, if any. */
  expectInvariants(): Promise<void>;
}

export interface TestStoreOptions extends Partial<
  Pick<StoreOptions, 'authorizeBatchesMax' | 'pricing' | 'writesOpenMax'>
> {
  /** Wraps the database's client before the store opens on it (to make it fail on purpose). */
  readonly wrapClient?: (client: SqlClient) => SqlClient;
  /** The store reads the machine's clock, not `clock` (for workers that wait in real time). */
  readonly systemClock?: boolean;
}

/**
 * One master key per test database, as one deployment has one: every store a test opens on a
 * database shares it, since what one store encrypts (the deposit seed, made once per database)
 * another must read.
 */
const masterKeys = new WeakMap<TestDatabase, Buffer>();
function masterKeyOf(database: TestDatabase): Buffer {
  let key = masterKeys.get(database);
  if (key === undefined) {
    key = randomBytes(32);
    masterKeys.set(database, key);
  }
  return key;
}

/** A store on `database` with the database's master key, reading the time from a TestClock. */
export async function openTestStore(
  database: TestDatabase,
  { wrapClient, systemClock = false, ...options }: TestStoreOptions = {},
): Promise<TestStore> {
  const clock = new TestClock();
  const client = await database.client();
  const store = await openStore({
    client: wrapClient === undefined ? client : wrapClient(client),
    masterKey: masterKeyOf(database),
    ...(systemClock ? {} : { clock: clock.now }),
    ...options,
  });
  let accounts = 0;
  return {
    store,
    clock,
    async scope(mode = 'test') {
      accounts += 1;
      const { id } = await store.findOrCreateAccount(
        `account-${accounts}-${randomBytes(4).toString('hex')}`,
      );
      return { accountId: id, mode };
    },
    async vault(owner, deposit = '0', fields = {}) {
      const created = await store.createVault(owner, {
        name: 'Ops',
        currency: 'USDC',
        metadata: {},
        ...fields,
        initialDeposit: new Decimal(deposit),
      });
      return created.vault;
    },
    card: (owner, vaultId, fields = {}) =>
      store.createCard(owner, { vaultId, cardholderName: 'Ada', metadata: {}, ...fields }),
    async expectInvariants() {
      const violations = await checkInvariants(store.client);
      if (violations.length > 0)
        throw new Error(`ledger invariants violated: ${JSON.stringify(violations, null, 2)}`);
    },
  };
}

/** A suite's store (a TestStore) and the test-mode scope of an account of its own. */
export interface StoreSuite extends TestStore {
  readonly owner: Scope;
}

/**
 * The suite's store on `database`: opened before its tests, with its own account (`owner`),
 * and the database closed (and dropped) after them. Hooks the suite declares after this call
 * run inside those two (vitest runs after-hooks in reverse), so they may use the store. Read
 * its members in tests and hooks only.
 */
export function useTestStore(database: TestDatabase, options: TestStoreOptions = {}): StoreSuite {
  let opened: { t: TestStore; owner: Scope } | undefined;
  beforeAll(async () => {
    const t = await openTestStore(database, options);
    opened = { t, owner: await t.scope() };
  });
  afterAll(async () => {
    await database.close();
  });
  const started = () => {
    if (opened === undefined) throw new Error('the suite store is used outside a test');
    return opened;
  };
  return {
    get store() {
      return started().t.store;
    },
    get clock() {
      return started().t.clock;
    },
    get owner() {
      return started().owner;
    },
    scope: (mode) => started().t.scope(mode),
    vault: (owner, deposit, fields) => started().t.vault(owner, deposit, fields),
    card: (owner, vaultId, fields) => started().t.card(owner, vaultId, fields),
    expectInvariants: () => started().t.expectInvariants(),
  };
}

export const usdc = (value: string): Decimal => new Decimal(value);

export function merchant(
  overrides: Partial<{ name: string; mcc: string; country: string; city: string; id: string }> = {},
) {
  return { name: 'Cafe Rio', mcc: '5812', country: 'US', ...overrides };
}

let networkIds = 0;
export function networkTransactionId(): string {
  networkIds += 1;
  return `ntx_${process.pid}_${networkIds}_${randomBytes(4).toString('hex')}`;
}

/** A promise and the call that resolves it: one side of a test waits for the other. */
export function signal(): { readonly done: Promise<void>; readonly give: () => void } {
  let give = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    give = resolve;
  });
  return { done, give };
}

/** Holds the vault's row lock in a transaction of its own until `release` is called. */
export function lockVault(store: Store, vaultId: string) {
  const { done: released, give: release } = signal();
  const { done: isLocked, give: locked } = signal();
  const done = store.client.transaction(async (tx) => {
    await tx.query('SELECT id FROM vaults WHERE id = $1 FOR UPDATE', [vaultId]);
    locked();
    await released;
  });
  return { isLocked, release, done };
}
