import { describe, expect, it } from 'vitest';
import { fundedCard, MERCHANT, networkId, type DecisionJson } from '../support/authorize.js';
import { useTestService } from '../support/http.js';

/**
 * Shadow rules, recorded (issue 14): a card authorization's shadow matches are stored with its
 * transaction, in the authorize batch's one statement, and shown wherever the transaction is:
 * Retrieve and List Transactions, the authorization.* events, a repeated callback's answer.
 * Real HTTP on PostgreSQL.
 */
interface Json extends Omit<DecisionJson, 'id'> {
  id: string;
  data: { id: string; type: string; shadowMatches: { rule: string; message: string }[] }[];
}

const WATCH_BIG = {
  name: 'watch-big',
  mode: 'shadow',
  message: 'Big spend',
  conditions: { all: [{ fact: 'amount', operator: 'greaterThan', value: 5 }] },
};
const WATCH_CAFES = {
  name: 'watch-cafes',
  mode: 'shadow',
  message: 'Cafe spend',
  conditions: { all: [{ fact: 'mcc', operator: 'equal', value: MERCHANT.mcc }] },
};

describe('shadow matches, recorded', () => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const authorize = (cardId: string, amount: string, networkTransactionId = networkId()) =>
    call('POST', '/v1/authorizations', {
      cardId,
      amount,
      currency: 'USDC',
      merchant: MERCHANT,
      networkTransactionId,
    });
  const stored = async (id: string) => {
    const { rows } = await harness.service.store.client.query<{ shadow_matches: unknown }>(
      'SELECT shadow_matches FROM transactions WHERE id = $1',
      [id],
    );
    return rows[0]?.shadow_matches;
  };
  const eventObjects = async (id: string) => {
    const { rows } = await harness.service.store.client.query<{
      type: string;
      payload: { data: { object: { shadowMatches: unknown } } };
    }>(
      `SELECT type, payload FROM outbox_events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY id`,
      [id],
    );
    return rows.map((row) => [row.type, row.payload.data.object.shadowMatches]);
  };

  it('stores the matches with the transaction and shows them in its object and its event', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    await call('PUT', `/v1/vaults/${vaultId}/policy`, {
      limits: [{ interval: 'perTransaction', amount: '50' }],
      rules: [WATCH_BIG, WATCH_CAFES],
    });
    const both = [
      { rule: 'watch-big', message: 'Big spend' },
      { rule: 'watch-cafes', message: 'Cafe spend' },
    ];

    const approved = await authorize(cardId, '6');
    expect([approved.body.approved, approved.body.shadowMatches]).toEqual([true, both]);
    expect(await stored(approved.body.id)).toEqual(both);
    const retrieved = await call('GET', `/v1/transactions/${approved.body.id}`);
    expect(retrieved.body.shadowMatches).toEqual(both);
    expect(await eventObjects(approved.body.id)).toEqual([['authorization.approved', both]]);

    // A decline by an enforcing rule still reports the shadow rules that held.
    const declined = await authorize(cardId, '60');
    expect([declined.body.declineReason?.rule, declined.body.shadowMatches]).toEqual([
      'limits[0]',
      both,
    ]);
    expect(await eventObjects(declined.body.id)).toEqual([['authorization.declined', both]]);

    // One match of two; and none at all is NULL in the row, [] in the object.
    const one = await authorize(cardId, '5');
    expect(one.body.shadowMatches).toEqual([both[1]]);
    await call('PUT', `/v1/vaults/${vaultId}/policy`, { rules: [WATCH_BIG] });
    const none = await authorize(cardId, '5');
    expect(none.body.shadowMatches).toEqual([]);
    expect(await stored(none.body.id)).toBeNull();
    expect((await call('GET', `/v1/transactions/${none.body.id}`)).body.shadowMatches).toEqual([]);
    expect(await eventObjects(none.body.id)).toEqual([['authorization.approved', []]]);

    const listed = await call('GET', `/v1/transactions?vaultId=${vaultId}&limit=100`);
    const byId = new Map(listed.body.data.map((row) => [row.id, row.shadowMatches]));
    expect([
      byId.get(approved.body.id),
      byId.get(declined.body.id),
      byId.get(one.body.id),
      byId.get(none.body.id),
    ]).toEqual([both, both, [both[1]], []]);
    // Transactions of other types carry an empty list.
    const deposits = listed.body.data.filter((row) => row.type === 'deposit');
    expect(deposits.map((row) => row.shadowMatches)).toEqual([[]]);
  });

  it('answers a repeated callback with the shadow matches the first decision recorded', async () => {
    const { vaultId, cardId } = await fundedCard(harness, '100');
    await call('PUT', `/v1/vaults/${vaultId}/policy`, { rules: [WATCH_BIG] });
    const ntx = networkId();
    const first = await authorize(cardId, '7', ntx);
    // The policy changes; the repeat answers what was decided first, matches included.
    await call('PUT', `/v1/vaults/${vaultId}/policy`, { rules: [WATCH_CAFES] });
    const repeat = await authorize(cardId, '7', ntx);
    expect(repeat.body.id).toBe(first.body.id);
    expect(repeat.body.shadowMatches).toEqual([{ rule: 'watch-big', message: 'Big spend' }]);
  });
});
