import { randomBytes } from 'node:crypto';
import { Decimal, type Scope } from '../../src/core/index.js';
import { checkInvariants } from '../../src/store/invariants.js';
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
  /** Fails the test with the list of violated invariants, if any. */
  expectInvariants(): Promise<void>;
}

export async function openTestStore(
  database: TestDatabase,
  options: Partial<Pick<StoreOptions, 'authorizeBatchesMax'>> = {},
): Promise<TestStore> {
  const clock = new TestClock();
  const store = await openStore({
    client: await database.client(),
    masterKey: randomBytes(32),
    clock: clock.now,
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
    async expectInvariants() {
      const violations = await checkInvariants(store.client);
      if (violations.length > 0)
        throw new Error(`ledger invariants violated: ${JSON.stringify(violations, null, 2)}`);
    },
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

/** Holds the vault's row lock in a transaction of its own until `release` is called. */
export function lockVault(store: Store, vaultId: string) {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = (): void => undefined;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = store.client.transaction(async (tx) => {
    await tx.query('SELECT id FROM vaults WHERE id = $1 FOR UPDATE', [vaultId]);
    locked();
    await released;
  });
  return { isLocked, release, done };
}
