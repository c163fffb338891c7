import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { useTestService, type ServiceHarness } from '../support/http.js';
import { processorTestKit } from '../support/processors.js';

/**
 * What the processors' doors keep in memory (src/http/processors/lookups.ts) over real HTTP on
 * PostgreSQL: a connection's secrets stop verifying at once after a rotation or a delete made
 * through this process, and within the cache's bound after one made elsewhere (here: straight
 * through the store, as another process would); a processor card re-tied to another card is
 * never decided on the card it was tied to before.
 */
interface Json {
  id: string;
  approved?: boolean;
  metadata?: Record<string, string>;
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
  processorCard?: { connectionId: string; cardId: string } | null;
  error?: { code: string; param?: string };
}

const SECRET = 'whsec_lookups_first_secret';
const SECOND = 'whsec_lookups_second_secret';
/** The connection cache's bound in the "another process" block: short, for the test's sake. */
const BOUND_MS = 400;

let events = 0;
/** An issuing_authorization.request for `card`, in the shape the Stripe tests build it. */
function requestEvent(card: string, amount: number): Stripe.Event {
  events += 1;
  const id = `iauth_lookups_${process.pid}_${events}`;
  return {
    id: `evt_lookups_${process.pid}_${events}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'issuing_authorization.request',
    data: {
      object: {
        id,
        object: 'issuing.authorization',
        amount: 0,
        approved: false,
        card: { id: card, object: 'issuing.card' },
        currency: 'usd',
        livemode: false,
        merchant_amount: 0,
        merchant_currency: 'usd',
        merchant_data: {
          category: 'eating_places_restaurants',
          category_code: '5812',
          city: 'Austin',
          country: 'US',
          name: 'Cafe Lookups',
          network_id: '1',
          postal_code: '78701',
          state: 'TX',
        },
        network_data: { transaction_id: `ntx_${id}` },
        pending_request: {
          amount,
          amount_details: null,
          currency: 'usd',
          is_amount_controllable: false,
          merchant_amount: amount,
          merchant_currency: 'usd',
          network_risk_score: null,
        },
        request_history: [],
        status: 'pending',
      },
    },
  } as unknown as Stripe.Event;
}

function sender(harness: ServiceHarness<Json>) {
  return async (connectionId: string, body: Stripe.Event, secret: string) => {
    const payload = JSON.stringify(body);
    const response = await fetch(`${harness.service.base}/v1/processors/stripe/${connectionId}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }),
      },
      body: payload,
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('processor lookups kept in memory: changes made through this process', () => {
  // A long bound: anything refused below was forgotten by the change, not by time.
  const harness = useTestService<Json>({
    processorLookups: { connectionCacheMs: 600_000, cardCacheMs: 600_000 },
  });
  const { call } = harness;
  const send = sender(harness);
  const { setUp, balanceOf } = processorTestKit(harness, {
    processor: 'stripe',
    signingSecret: SECRET,
  });

  it('refuses the old secret at once after a rotation without grace', async () => {
    const { connectionId } = await setUp('100', 'ic_rotate_here');
    expect((await send(connectionId, requestEvent('ic_rotate_here', 100), SECRET)).status).toBe(
      200,
    );
    const rotated = await call('POST', `/v1/processors/${connectionId}/rotate`, {
      signingSecret: SECOND,
      graceSeconds: 0,
    });
    expect(rotated.status).toBe(200);
    const old = await send(connectionId, requestEvent('ic_rotate_here', 100), SECRET);
    expect([old.status, old.body.error?.code]).toEqual([400, 'invalid_signature']);
    const fresh = await send(connectionId, requestEvent('ic_rotate_here', 100), SECOND);
    expect([fresh.status, fresh.body.approved]).toEqual([200, true]);
  });

  it('refuses every message at once after a delete', async () => {
    const { connectionId } = await setUp('100', 'ic_delete_here');
    expect((await send(connectionId, requestEvent('ic_delete_here', 100), SECRET)).status).toBe(
      200,
    );
    expect((await call('DELETE', `/v1/processors/${connectionId}`)).status).toBe(200);
    const after = await send(connectionId, requestEvent('ic_delete_here', 100), SECRET);
    expect([after.status, after.body.error?.code]).toEqual([404, 'processor_not_found']);
  });

  it('decides a re-tied processor card on its new card, never the one it was tied to', async () => {
    const first = await setUp('100', 'ic_moved');
    const { connectionId } = first;
    // Kept: ic_moved is the first card's.
    const before = await send(connectionId, requestEvent('ic_moved', 1000), SECRET);
    expect(before.body.approved).toBe(true);
    expect((await balanceOf(first.vaultId))?.pending).toBe('10.00');
    // Another card takes ic_moved: the first is re-tied to another processor card first.
    const retied = await call('PATCH', `/v1/cards/${first.cardId}`, {
      processorCard: { connectionId, cardId: 'ic_moved_away' },
    });
    expect(retied.status).toBe(200);
    const vault = await call('POST', '/v1/vaults', {
      name: 'Q',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    const second = await call('POST', '/v1/cards', {
      vaultId: vault.body.id,
      cardholderName: 'Grace',
      processorCard: { connectionId, cardId: 'ic_moved' },
    });
    expect(second.status).toBe(201);
    const after = await send(connectionId, requestEvent('ic_moved', 2500), SECRET);
    expect(after.body.approved).toBe(true);
    expect((await balanceOf(first.vaultId))?.pending).toBe('10.00');
    expect((await balanceOf(vault.body.id))?.pending).toBe('25.00');
    // Untied: the kept tie names a card no longer tied; declined as unknown, nothing held.
    expect(
      (await call('PATCH', `/v1/cards/${second.body.id}`, { processorCard: null })).status,
    ).toBe(200);
    const untied = await send(connectionId, requestEvent('ic_moved', 500), SECRET);
    expect([untied.body.approved, untied.body.metadata?.['spendgate_error']]).toEqual([
      false,
      'card_not_found',
    ]);
    expect((await balanceOf(vault.body.id))?.pending).toBe('25.00');
    // The first card's new processor card is its own.
    const moved = await send(connectionId, requestEvent('ic_moved_away', 500), SECRET);
    expect(moved.body.approved).toBe(true);
    expect((await balanceOf(first.vaultId))?.pending).toBe('15.00');
  });
});

describe('processor lookups kept in memory: changes made by another process', () => {
  const harness = useTestService<Json>({ processorLookups: { connectionCacheMs: BOUND_MS } });
  const { call } = harness;
  const send = sender(harness);
  const { setUp } = processorTestKit(harness, { processor: 'stripe', signingSecret: SECRET });
  const scope = async () => {
    const account = await call('GET', '/v1/account');
    return { accountId: account.body.id, mode: 'test' as const };
  };

  it('refuses the old secret once the bound has passed after a rotation elsewhere', async () => {
    const { connectionId } = await setUp('100', 'ic_rotate_there');
    expect((await send(connectionId, requestEvent('ic_rotate_there', 100), SECRET)).status).toBe(
      200,
    );
    // Straight through the store: this process's doors are not told.
    await harness.service.store.rotateProcessorSecrets(await scope(), connectionId, {
      secrets: { signingSecret: SECOND },
      graceMs: 0,
    });
    await sleep(BOUND_MS + 50);
    const old = await send(connectionId, requestEvent('ic_rotate_there', 100), SECRET);
    expect([old.status, old.body.error?.code]).toEqual([400, 'invalid_signature']);
    const fresh = await send(connectionId, requestEvent('ic_rotate_there', 100), SECOND);
    expect([fresh.status, fresh.body.approved]).toEqual([200, true]);
  });

  it('refuses every message once the bound has passed after a delete elsewhere', async () => {
    const { connectionId } = await setUp('100', 'ic_delete_there');
    expect((await send(connectionId, requestEvent('ic_delete_there', 100), SECRET)).status).toBe(
      200,
    );
    await harness.service.store.deleteProcessorConnection(await scope(), connectionId);
    await sleep(BOUND_MS + 50);
    const after = await send(connectionId, requestEvent('ic_delete_there', 100), SECRET);
    expect([after.status, after.body.error?.code]).toEqual([404, 'processor_not_found']);
  });
});
