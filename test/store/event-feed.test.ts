import { afterAll, beforeAll, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { idTimePrefix } from '../../src/ids.js';
import { forEachDatabase } from '../support/databases.js';
import { merchant, networkTransactionId, openTestStore, type TestStore } from '../support/store.js';

/**
 * The live feed's read of the outbox (src/store/ops/event-feed.ts), on PostgreSQL and the
 * embedded PGlite alike: committed events after an id, of the types and the accounts and modes
 * asked for only, in id order, at most the rows asked for.
 */
const TYPES = ['authorization.approved', 'authorization.declined'];

forEachDatabase('the live feed of events', (database) => {
  let t: TestStore;
  let owner: Scope;
  let other: Scope;
  let ownerCardId: string;
  let otherCardId: string;
  const authorize = (scope: Scope, cardId: string, amount: string) =>
    t.store.authorize(scope, {
      cardId,
      amount: new Decimal(amount),
      currency: 'USDC',
      merchant: merchant(),
      networkTransactionId: networkTransactionId(),
    });

  beforeAll(async () => {
    t = await openTestStore(database);
    owner = await t.scope();
    other = await t.scope();
    ownerCardId = (await t.card(owner, (await t.vault(owner, '100')).id)).id;
    otherCardId = (await t.card(other, (await t.vault(other, '100')).id)).id;
  });
  afterAll(async () => {
    await database.close();
  });

  it('reads the asked types of the asked accounts after an id, in order and bounded', async () => {
    const start = idTimePrefix('event', t.clock.nowMs);
    const approved = await authorize(owner, ownerCardId, '10');
    t.clock.advance(1);
    await authorize(other, otherCardId, '1');
    t.clock.advance(1);
    const declined = await authorize(owner, ownerCardId, '500');
    t.clock.advance(1);
    const mine = await t.store.eventsAfter(start, TYPES, [owner], 100);
    expect(mine.map((event) => [event.type, event.accountId])).toEqual([
      ['authorization.approved', owner.accountId],
      ['authorization.declined', owner.accountId],
    ]);
    const payloads = mine.map((event) => event.payload as { data: { object: { id: string } } });
    expect(payloads.map((payload) => payload.data.object.id)).toEqual([
      approved.transaction?.id,
      declined.transaction?.id,
    ]);
    // The other mode of the owner's account is another feed; both accounts together, in order.
    expect(await t.store.eventsAfter(start, TYPES, [{ ...owner, mode: 'live' }], 100)).toEqual([]);
    const both = await t.store.eventsAfter(start, TYPES, [owner, other], 100);
    expect(both.map((event) => event.accountId)).toEqual([
      owner.accountId,
      other.accountId,
      owner.accountId,
    ]);
    expect(both.map((event) => event.id)).toEqual([...both.map((event) => event.id)].sort());
    // After an id, and at most the rows asked for; other types are not read.
    const [first] = await t.store.eventsAfter(start, TYPES, [owner, other], 1);
    expect(first?.id).toBe(both[0]?.id);
    const after = await t.store.eventsAfter(first?.id ?? '', TYPES, [owner, other], 100);
    expect(after.map((event) => event.id)).toEqual(both.slice(1).map((event) => event.id));
    expect(await t.store.eventsAfter(start, ['vault.created'], [owner], 100)).toHaveLength(1);
  });
});
