import { beforeAll, expect, it } from 'vitest';
import type { AuthorizationOutcome, Scope } from '../../../src/core/index.js';
import type { StoreOperations } from '../../../src/store/store.js';
import type { SqlClient } from '../../../src/store/sql/client.js';
import { forEachDatabase } from '../../support/databases.js';
import {
  merchant,
  networkTransactionId,
  openTestStore,
  signal,
  usdc,
  useTestStore,
  type TestStore,
} from '../../support/store.js';

/**
 * A batch whose cards and vaults its store has seen is decided on what the store knows and
 * written in one round trip (src/store/authorize/one-trip.ts); the write checks that the
 * database still holds that state. Here a second store on the same database (another server
 * process) changes each thing a decision depends on, and the first store's next decision must
 * be the one the database's state gives, never the one its memory would.
 */
forEachDatabase('authorizing on known state', (database) => {
  const t = useTestStore(database);
  /** Another store on the same database: another server process. */
  let other: TestStore;
  beforeAll(async () => {
    other = await openTestStore(database);
  });

  const authorize = (
    store: TestStore,
    scope: Scope,
    cardId: string,
    amount: string,
    ntx = networkTransactionId(),
  ): Promise<AuthorizationOutcome> =>
    store.store.authorize(scope, {
      cardId,
      amount: usdc(amount),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: ntx,
    });

  /** A funded vault and a card on it, and one authorization that makes both known to `t`. */
  async function known(deposit: string, first = '10') {
    const vault = await t.vault(t.owner, deposit);
    const card = await t.card(t.owner, vault.id);
    const outcome = await authorize(t, t.owner, card.id, first);
    expect(outcome.decision.approved).toBe(true);
    return { vault, card };
  }

  /** What `t`'s known state did during `work`: batches in one trip, and those found stale. */
  async function counted<T>(work: () => Promise<T>) {
    const before = t.store.authorizeStats();
    const result = await work();
    const after = t.store.authorizeStats();
    return {
      result,
      oneTrip: after.oneTrip - before.oneTrip,
      stale: after.stale - before.stale,
      fallbacks: after.fallbacks - before.fallbacks,
    };
  }

  it('a batch on a known card is decided in one trip, and the next one sees its hold', async () => {
    const { vault, card } = await known('100', '60');
    const second = await counted(() => authorize(t, t.owner, card.id, '30'));
    expect(second).toMatchObject({ oneTrip: 1, stale: 0, fallbacks: 0 });
    expect(second.result.decision.approved).toBe(true);
    const third = await counted(() => authorize(t, t.owner, card.id, '20'));
    expect(third).toMatchObject({ oneTrip: 1, stale: 0 });
    expect(third.result.decision.declineCode).toBe('insufficient_balance');
    const after = await t.store.getVault(t.owner, vault.id);
    expect(after.pending.toFixed()).toBe('90');
    await t.expectInvariants();
  });

  it('a hold another process placed since is seen: no overdraft', async () => {
    const { vault, card } = await known('100', '60');
    expect((await authorize(other, t.owner, card.id, '30')).decision.approved).toBe(true);
    // Known: 40 available. The database: 10.
    const next = await counted(() => authorize(t, t.owner, card.id, '20'));
    expect(next).toMatchObject({ oneTrip: 1, stale: 1, fallbacks: 0 });
    expect(next.result.decision.declineCode).toBe('insufficient_balance');
    // Known again, from the read: the next batch is one trip and right.
    const last = await counted(() => authorize(t, t.owner, card.id, '10'));
    expect(last).toMatchObject({ oneTrip: 1, stale: 0 });
    expect(last.result.decision.approved).toBe(true);
    const after = await t.store.getVault(t.owner, vault.id);
    expect(after.ledger.minus(after.pending).toFixed()).toBe('0');
    await t.expectInvariants();
  });

  it('spend another process counted since is seen: a count limit holds', async () => {
    const vault = await t.vault(t.owner, '1000');
    await t.store.setPolicy(t.owner, vault.id, { limits: [{ interval: 'daily', count: 2 }] });
    const card = await t.card(t.owner, vault.id);
    expect((await authorize(t, t.owner, card.id, '1')).decision.approved).toBe(true);
    expect((await authorize(other, t.owner, card.id, '1')).decision.approved).toBe(true);
    const third = await counted(() => authorize(t, t.owner, card.id, '1'));
    expect(third).toMatchObject({ oneTrip: 1, stale: 1 });
    expect(third.result.decision.approved).toBe(false);
    expect(third.result.decision.declineReason?.rule).toBe('limits[0]');
    await t.expectInvariants();
  });

  it("a card frozen since is declined, and a vault's new policy applies", async () => {
    const { vault, card } = await known('100');
    await other.store.setCardStatus(t.owner, card.id, 'frozen');
    const frozen = await counted(() => authorize(t, t.owner, card.id, '1'));
    expect(frozen.stale).toBe(1);
    expect(frozen.result.decision.declineCode).toBe('card_declined');
    await other.store.setCardStatus(t.owner, card.id, 'active');
    expect((await authorize(t, t.owner, card.id, '1')).decision.approved).toBe(true);
    await other.store.setPolicy(t.owner, vault.id, {
      limits: [{ interval: 'perTransaction', amount: '5' }],
    });
    const limited = await counted(() => authorize(t, t.owner, card.id, '6'));
    expect(limited.stale).toBe(1);
    expect(limited.result.decision.declineReason?.rule).toBe('limits[0]');
    await t.expectInvariants();
  });

  it("a card's own policy set since applies, and its counters count the approval", async () => {
    const { card } = await known('100');
    await other.store.setCardPolicy(t.owner, card.id, {
      limits: [{ interval: 'daily', amount: '25' }],
    });
    // The card's spend today: the 10 of known(), and now 10 more.
    const first = await counted(() => authorize(t, t.owner, card.id, '10'));
    expect(first.stale).toBe(1);
    expect(first.result.decision.approved).toBe(true);
    // A card with a policy of its own is not known: read first, every time.
    const second = await counted(() => authorize(t, t.owner, card.id, '10'));
    expect(second.oneTrip).toBe(0);
    expect(second.result.decision.approved).toBe(false);
    await t.expectInvariants();
  });

  it('a networkTransactionId another process decided since gets that first decision', async () => {
    const { card } = await known('100');
    const ntx = networkTransactionId();
    const first = await authorize(other, t.owner, card.id, '5', ntx);
    const repeated = await counted(() => authorize(t, t.owner, card.id, '5', ntx));
    expect(repeated.stale).toBe(1);
    expect(repeated.result.replayed).toBe(true);
    expect(repeated.result.transaction?.id).toBe(first.transaction?.id);
    await t.expectInvariants();
  });

  /**
   * Runs `change` in another process's transaction and holds that transaction open while a
   * store of its own (so that its stale batches are not `t`'s) authorizes on known state: the
   * batch's statement takes its snapshot with the change not yet committed and then waits on
   * the vault the change holds. The change commits; then the batch ends. Returns the outcome,
   * what the store's known state did, and the store.
   */
  async function authorizeBesideOpenChange(
    change: (operations: StoreOperations) => Promise<unknown>,
    cardId: string,
    amount: string,
  ) {
    const own = await openTestStore(database);
    expect((await authorize(own, t.owner, cardId, '1')).decision.approved).toBe(true);
    const { done: released, give: release } = signal();
    const { done: isChanged, give: changed } = signal();
    const changing = other.store.transaction(async (operations) => {
      await change(operations);
      changed();
      await released;
    });
    await isChanged;
    const before = own.store.authorizeStats();
    const deciding = authorize(own, t.owner, cardId, amount);
    await untilWaitingOnALock(await database.client());
    release();
    await changing;
    const result = await deciding;
    const after = own.store.authorizeStats();
    return {
      result,
      oneTrip: after.oneTrip - before.oneTrip,
      stale: after.stale - before.stale,
      fallbacks: after.fallbacks - before.fallbacks,
      own,
    };
  }

  // PGlite runs one transaction at a time: a change cannot be open beside a batch there.
  if (database.kind === 'pg') {
    it("a card's own policy filled while the batch wrote: stale, and its counters count the approval", async () => {
      const vault = await t.vault(t.owner, '100');
      const card = await t.card(t.owner, vault.id);
      const policy = { limits: [{ interval: 'daily', amount: '25' }] };
      const first = await authorizeBesideOpenChange(
        (operations) => operations.setCardPolicy(t.owner, card.id, policy),
        card.id,
        '10',
      );
      // Decided on known state before the policy committed, which filled the card's counters
      // from the authorizations it could see: committed beside it, the approval would be in
      // no counter of the card.
      expect(first).toMatchObject({ oneTrip: 1, stale: 1, fallbacks: 0 });
      expect(first.result.decision.approved).toBe(true);
      // The card's spend today: 1 and 10, of 25.
      const second = await authorize(first.own, t.owner, card.id, '15');
      expect(second.decision.approved).toBe(false);
      expect(second.decision.declineReason?.policy).toBe('card');
      expect((await authorize(first.own, t.owner, card.id, '14')).decision.approved).toBe(true);
      await t.expectInvariants();
    });

    it("a vault's policy set while the batch wrote: stale, and the new policy decides", async () => {
      const vault = await t.vault(t.owner, '100');
      const card = await t.card(t.owner, vault.id);
      const policy = { limits: [{ interval: 'perTransaction', amount: '5' }] };
      const limited = await authorizeBesideOpenChange(
        (operations) => operations.setPolicy(t.owner, vault.id, policy),
        card.id,
        '6',
      );
      expect(limited).toMatchObject({ oneTrip: 1, stale: 1, fallbacks: 0 });
      expect(limited.result.decision.declineReason?.rule).toBe('limits[0]');
      await t.expectInvariants();
    });
  }

  it('what was known on another day, or long ago, is read again', async () => {
    const { card } = await known('100');
    t.clock.advance(24 * 3_600_000);
    const nextDay = await counted(() => authorize(t, t.owner, card.id, '1'));
    expect(nextDay).toMatchObject({ oneTrip: 0, stale: 0 });
    expect(nextDay.result.decision.approved).toBe(true);
    t.clock.advance(61_000);
    const later = await counted(() => authorize(t, t.owner, card.id, '1'));
    expect(later).toMatchObject({ oneTrip: 0, stale: 0 });
    const soon = await counted(() => authorize(t, t.owner, card.id, '1'));
    expect(soon).toMatchObject({ oneTrip: 1, stale: 0 });
    await t.expectInvariants();
  });

  it('is not kept for a vault whose counters hold more than 256 rows', async () => {
    const { card } = await known('10000');
    // Each MCC approved adds two rows (its day, its all time) to the vault's counters.
    const buy = (mcc: string) =>
      t.store.authorize(t.owner, {
        cardId: card.id,
        amount: usdc('1'),
        currency: 'USDC',
        merchant: merchant({ mcc }),
        networkTransactionId: networkTransactionId(),
      });
    const kept = await counted(async () => {
      for (let index = 0; index < 126; index++) await buy(String(1000 + index));
    });
    expect(kept).toMatchObject({ oneTrip: 126, stale: 0 });
    const past = await counted(async () => {
      for (let index = 126; index < 130; index++) await buy(String(1000 + index));
    });
    // The first purchase left 4 rows, each MCC since 2 more: the 127th MCC's batch, decided
    // on 256 rows, leaves 258, which are not kept; so the next batch reads first (the vault
    // has no policy: it reads no rows, and leaves its own 4), and the two after are one trip.
    expect(past).toMatchObject({ oneTrip: 3, stale: 0 });
    await t.expectInvariants();
  });

  it('is set aside for a while when it goes stale in more than one batch in eight', async () => {
    // A store of its own, so that its first window of batches is this test's.
    const own = await openTestStore(database);
    const vault = await own.vault(t.owner, '1000');
    const card = await own.card(t.owner, vault.id);
    const stats = () => own.store.authorizeStats();
    expect((await authorize(own, t.owner, card.id, '1')).decision.approved).toBe(true);
    // Another process writes the vault between every two of this store's batches: each of its
    // guesses is stale, and at the end of the window (64 batches) it stops guessing.
    for (let round = 0; round < 64; round++) {
      await authorize(other, t.owner, card.id, '1');
      expect((await authorize(own, t.owner, card.id, '1')).decision.approved).toBe(true);
    }
    expect(stats()).toMatchObject({ oneTrip: 64, stale: 64, fallbacks: 0 });
    expect((await authorize(own, t.owner, card.id, '1')).decision.approved).toBe(true);
    expect(stats()).toMatchObject({ oneTrip: 64, stale: 64 });
    expect((await own.store.getVault(t.owner, vault.id)).pending.toFixed()).toBe('130');
    await t.expectInvariants();
  });
});

const LOCK_WAIT_MS_MAX = 10_000;

/** Resolves once a backend of the client's database waits on a lock (polled, bounded). */
async function untilWaitingOnALock(client: SqlClient): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS_MAX;
  for (;;) {
    const { rows } = await client.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.waiting ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('no backend came to wait on a lock');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
