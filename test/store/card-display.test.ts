import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import { DISPLAY_TOKEN_TTL_MS } from '../../src/store/store.js';
import { applyRetention } from '../../src/workers/maintenance.js';
import { forEachDatabase } from '../support/databases.js';
import { openTestStore, type TestStore } from '../support/store.js';

/**
 * Card display tokens and origins in the store (src/store/ops/card-display.ts), on PostgreSQL
 * and the embedded PGlite alike: a token shows its card once, within its minute, to no one
 * after; its row holds its hash alone; the maintenance run deletes it at its expiry; the
 * origins are kept per account and mode.
 */
forEachDatabase('card display tokens', (database) => {
  let t: TestStore;
  let scope: Scope;
  let cardId: string;
  beforeAll(async () => {
    t = await openTestStore(database);
    scope = await t.scope();
    const vault = await t.vault(scope, '10');
    cardId = (await t.card(scope, vault.id)).id;
  });
  afterAll(async () => {
    await database.close();
  });

  it('shows the card once, within its minute, and keeps only the hash', async () => {
    const revealed = await t.store.revealCard(scope, cardId);
    const first = await t.store.createDisplayToken(scope, cardId);
    expect(first.expiresAtMs - t.clock.nowMs).toBe(DISPLAY_TOKEN_TTL_MS);
    const shown = await t.store.spendDisplayToken(first.token);
    expect(shown?.details).toEqual(revealed);
    expect(shown?.origins).toEqual([]);
    expect(await t.store.spendDisplayToken(first.token)).toBeNull();

    const second = await t.store.createDisplayToken(scope, cardId);
    t.clock.advance(DISPLAY_TOKEN_TTL_MS);
    expect(await t.store.spendDisplayToken(second.token)).toBeNull();
    expect(await t.store.spendDisplayToken('cdt_' + 'A'.repeat(43))).toBeNull();
    expect(await t.store.spendDisplayToken("' OR 1=1 --")).toBeNull();
    const { rows } = await t.store.client.query('SELECT * FROM card_display_tokens');
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain(first.token.slice(4));
    expect(JSON.stringify(rows)).not.toContain(second.token.slice(4));
    await t.expectInvariants();
  });

  it('is deleted by the maintenance run at its expiry, spent or not', async () => {
    const fresh = await t.store.createDisplayToken(scope, cardId);
    // The two of the test above are past their expiry; the fresh one is not.
    expect((await applyRetention(t.store)).displayTokens).toBe(2);
    t.clock.advance(DISPLAY_TOKEN_TTL_MS - 1);
    expect((await applyRetention(t.store)).displayTokens).toBe(0);
    expect((await t.store.spendDisplayToken(fresh.token))?.details.cardId).toBe(cardId);
    t.clock.advance(1);
    expect((await applyRetention(t.store)).displayTokens).toBe(1);
  });

  it('keeps the origins per account and mode, and gives them with the card', async () => {
    const live: Scope = { ...scope, mode: 'live' };
    expect(await t.store.displayOrigins(scope)).toEqual([]);
    await t.store.setDisplayOrigins(scope, ['https://a.example.com', 'http://localhost:3000']);
    await t.store.setDisplayOrigins(live, ['https://b.example.com']);
    expect(await t.store.displayOrigins(scope)).toEqual([
      'https://a.example.com',
      'http://localhost:3000',
    ]);
    expect(await t.store.displayOrigins(live)).toEqual(['https://b.example.com']);
    const { token } = await t.store.createDisplayToken(scope, cardId);
    expect((await t.store.spendDisplayToken(token))?.origins).toEqual([
      'https://a.example.com',
      'http://localhost:3000',
    ]);
    expect(await t.store.setDisplayOrigins(scope, [])).toEqual([]);
    await expect(t.store.createDisplayToken(live, cardId)).rejects.toMatchObject({
      code: 'card_not_found',
    });
  });
});
