import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServer } from '../../src/config/env.js';
import { EVENT_TYPES } from '../../src/store/outbox.js';
import { startWorkers, type Workers } from '../../src/workers/start.js';
import { documentedEventTypes } from '../support/reference-doc.js';
import {
  LOCAL_REDIS_URL,
  startTestService,
  testRedisPrefix,
  type TestService,
  SILENT_LOG,
} from '../support/http.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

/**
 * Events and webhooks end to end (contract section 13), with the real PostgreSQL, the real
 * Redis and BullMQ, and a receiver on loopback that verifies every delivery with the
 * `standardwebhooks` library: each event type arrives signed, with the resource as the API
 * returns it; retries follow the (shortened) schedule; a 410 disables the endpoint; a deleted
 * endpoint's deliveries stop; a change that rolled back never produces an event.
 */

interface Json {
  id: string;
  object: string;
  secret: string;
  status: string;
  delivered: boolean;
  statusCode: number | null;
  eventId: string;
  data: {
    id: string;
    status: string;
    attempt: number;
    statusCode: number | null;
    eventType: string;
  }[];
  error?: { code: string; param?: string };
}

describe('webhooks', () => {
  let service: TestService;
  let workers: Workers;
  let key: string;

  beforeAll(async () => {
    service = await startTestService();
    ({ key } = await service.key());
    workers = startWorkers({
      store: service.store,
      redis: redisServer(LOCAL_REDIS_URL),
      redisPrefix: testRedisPrefix(),
      delivery: {
        concurrency: 16,
        endpointConcurrency: 4,
        retryDelaysMs: [100, 100, 100],
        timeoutMs: 2000,
      },
      relay: { batchMax: 100, idleMs: 20 },
      log: SILENT_LOG,
    });
  });

  afterAll(async () => {
    await workers.stop();
    await service.close();
  });

  const call = async (method: string, path: string, body?: unknown, as = key) => {
    const answer = await service.request(as, method, path, body);
    return { ...answer, body: answer.body as Json };
  };

  /** A receiver with an endpoint of its own, for `events`, on a new account unless given one. */
  async function endpoint(events: string[], as = key): Promise<{ receiver: Receiver; id: string }> {
    const receiver = await startReceiver();
    const created = await call('POST', '/v1/webhooks', { url: receiver.url, events }, as);
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    receiver.secret = created.body.secret;
    return { receiver, id: created.body.id };
  }

  it('delivers every event type of the contract, signed, with the resource as the API returns it', async () => {
    const own = await service.key();
    const { receiver } = await endpoint(['*'], own.key);
    try {
      const as = own.key;
      const vault = (
        await call(
          'POST',
          '/v1/vaults',
          { name: 'W', currency: 'USDC', network: 'solana', initialDeposit: '100' },
          as,
        )
      ).body;
      const other = (
        await call('POST', '/v1/vaults', { name: 'X', currency: 'USDC', network: 'solana' }, as)
      ).body;
      const updated = (await call('PATCH', `/v1/vaults/${vault.id}`, { name: 'W2' }, as)).body;
      await call('POST', `/v1/vaults/${vault.id}/freeze`, {}, as);
      await call('POST', `/v1/vaults/${vault.id}/unfreeze`, undefined, as);
      await call(
        'PUT',
        `/v1/vaults/${vault.id}/policy`,
        { limits: [{ interval: 'perTransaction', amount: '50' }] },
        as,
      );
      const card = (await call('POST', '/v1/cards', { vaultId: vault.id, cardholderName: 'W' }, as))
        .body;
      await call('PATCH', `/v1/cards/${card.id}`, { cardholderName: 'W2' }, as);
      await call('POST', `/v1/cards/${card.id}/freeze`, undefined, as);
      await call('POST', `/v1/cards/${card.id}/unfreeze`, undefined, as);
      const merchant = { name: 'Cafe', mcc: '5812', country: 'US' };
      const approve = (
        await call(
          'POST',
          '/v1/authorizations',
          {
            cardId: card.id,
            amount: '10',
            currency: 'USDC',
            merchant,
            networkTransactionId: `w1-${card.id}`,
          },
          as,
        )
      ).body;
      await call(
        'POST',
        '/v1/authorizations',
        {
          cardId: card.id,
          amount: '60',
          currency: 'USDC',
          merchant,
          networkTransactionId: `w2-${card.id}`,
        },
        as,
      );
      await call('POST', `/v1/authorizations/${approve.id}/capture`, undefined, as);
      const reversed = (
        await call(
          'POST',
          '/v1/authorizations',
          {
            cardId: card.id,
            amount: '5',
            currency: 'USDC',
            merchant,
            networkTransactionId: `w3-${card.id}`,
          },
          as,
        )
      ).body;
      await call('POST', `/v1/authorizations/${reversed.id}/reverse`, undefined, as);
      await call('DELETE', `/v1/vaults/${vault.id}/policy`, undefined, as);
      await call(
        'POST',
        '/v1/transfers',
        { fromVaultId: vault.id, toVaultId: other.id, amount: '1' },
        as,
      );
      const external = async () =>
        (
          await call(
            'POST',
            '/v1/transfers/external',
            {
              fromVaultId: vault.id,
              address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
              amount: '1',
            },
            as,
          )
        ).body;
      // The Solana worker completes and fails external transfers: the store's
      // operations it will call stand in for it here.
      await service.store.completeExternalTransfer((await external()).id, 'sig_test');
      await service.store.failExternalTransfer((await external()).id, 'chain_failed');
      // A transaction's whole life (contract v1.2, section 16): an increment, an advice that
      // overdraws the vault, a refund that restores it.
      const hotel = (
        await call(
          'POST',
          '/v1/authorizations',
          {
            cardId: card.id,
            amount: '20',
            currency: 'USDC',
            merchant,
            networkTransactionId: `w4-${card.id}`,
          },
          as,
        )
      ).body;
      const lifecycle = [
        [
          `/v1/authorizations/${hotel.id}/increment`,
          { amount: '5', networkTransactionId: `w5-${card.id}` },
        ],
        [
          '/v1/authorizations/advice',
          {
            cardId: card.id,
            amount: '500',
            currency: 'USDC',
            merchant,
            networkTransactionId: `w6-${card.id}`,
            approved: true,
            reason: 'stand_in',
          },
        ],
        [
          '/v1/refunds',
          {
            cardId: card.id,
            amount: '1000',
            currency: 'USDC',
            merchant,
            networkTransactionId: `w7-${card.id}`,
          },
        ],
      ] as const;
      for (const [path, body] of lifecycle) {
        expect((await call('POST', path, body, as)).status, path).toBeLessThan(300);
      }
      await call('POST', `/v1/cards/${card.id}/cancel`, undefined, as);
      await call(
        'POST',
        `/v1/vaults/${other.id}/close`,
        { destination: { vaultId: vault.id } },
        as,
      );

      const types = documentedEventTypes().filter((type) => type !== 'webhook.test');
      for (const type of types) await receiver.until(1, type);
      expect(receiver.received.every((delivery) => delivery.verified)).toBe(true);
      expect(receiver.received.every((delivery) => delivery.body.mode === 'test')).toBe(true);
      // The webhook-id is the event id, the same on every attempt.
      expect(
        receiver.received.every((delivery) => delivery.headers['webhook-id'] === delivery.id),
      ).toBe(true);
      // The resource as the API returned it when the change was made.
      const updatedEvent = receiver.received.find((delivery) => delivery.type === 'vault.updated');
      expect(updatedEvent?.body.data.object).toEqual(updated);
      const cardEvent = receiver.received.find((delivery) => delivery.type === 'card.created');
      expect(cardEvent?.body.data.object).toEqual(card);
      const approvedEvent = receiver.received.find(
        (delivery) => delivery.type === 'authorization.approved',
      );
      // A transaction as it stood when approved: pending, since captured.
      expect(approvedEvent?.body.data.object).toMatchObject({
        id: approve.id,
        object: 'transaction',
        status: 'pending',
        amount: '10.00',
      });
      expect((await call('GET', `/v1/transactions/${approve.id}`, undefined, as)).body.status).toBe(
        'completed',
      );
      // Each event once (nothing failed, so nothing was retried).
      const ids = receiver.received.map((delivery) => delivery.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await receiver.close();
    }
  });

  it('knows exactly the event types of the reference page', () => {
    expect([...EVENT_TYPES].sort()).toEqual(documentedEventTypes().sort());
    expect(EVENT_TYPES.length).toBeGreaterThan(15);
  });

  it('retries a failing receiver on the schedule and records every attempt', async () => {
    const own = await service.key();
    const { receiver, id } = await endpoint(['vault.created'], own.key);
    try {
      receiver.answer = (_delivery, index) => (index < 2 ? 503 : 200);
      await call('POST', '/v1/vaults', { name: 'R', currency: 'USDC', network: 'solana' }, own.key);
      const arrived = await receiver.until(3, 'vault.created');
      expect(new Set(arrived.map((delivery) => delivery.id)).size).toBe(1);
      const deliveries = async () =>
        (await call('GET', `/v1/webhooks/${id}/deliveries`, undefined, own.key)).body.data;
      let listed = await deliveries();
      for (let attempt = 0; attempt < 50 && listed.length < 3; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        listed = await deliveries();
      }
      expect(
        listed.map((delivery) => [delivery.attempt, delivery.status, delivery.statusCode]),
      ).toEqual([
        [3, 'succeeded', 200],
        [2, 'failed', 503],
        [1, 'failed', 503],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('disables an endpoint that answers 410, and sends it nothing more', async () => {
    const own = await service.key();
    const { receiver, id } = await endpoint(['vault.created'], own.key);
    try {
      receiver.answer = () => 410;
      await call('POST', '/v1/vaults', { name: 'G', currency: 'USDC', network: 'solana' }, own.key);
      await receiver.until(1, 'vault.created');
      let status = '';
      for (let attempt = 0; attempt < 50 && status !== 'disabled'; attempt++) {
        const listed = (await call('GET', '/v1/webhooks', undefined, own.key)).body.data;
        status = listed.find((endpointRow) => endpointRow.id === id)?.status ?? '';
        if (status !== 'disabled') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe('disabled');
      await call(
        'POST',
        '/v1/vaults',
        { name: 'G2', currency: 'USDC', network: 'solana' },
        own.key,
      );
      await new Promise((resolve) => setTimeout(resolve, 600));
      // One attempt, never retried, and nothing after it.
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('stops the pending deliveries of a deleted endpoint', async () => {
    const own = await service.key();
    const { receiver, id } = await endpoint(['vault.created'], own.key);
    try {
      receiver.answer = () => 500;
      await call('POST', '/v1/vaults', { name: 'D', currency: 'USDC', network: 'solana' }, own.key);
      await receiver.until(1, 'vault.created');
      const deleted = await call('DELETE', `/v1/webhooks/${id}`, undefined, own.key);
      expect(deleted.body).toEqual({ object: 'webhook_endpoint', id, deleted: true });
      const after = receiver.received.length;
      await new Promise((resolve) => setTimeout(resolve, 600));
      // Retries were due every 100 ms; at most one was already in flight.
      expect(receiver.received.length).toBeLessThanOrEqual(after + 1);
      const again = await call('DELETE', `/v1/webhooks/${id}`, undefined, own.key);
      expect([again.status, again.body.error?.code]).toEqual([404, 'webhook_not_found']);
    } finally {
      await receiver.close();
    }
  });

  it('answers Test Webhook with the outcome of one signed delivery', async () => {
    const own = await service.key();
    const { receiver, id } = await endpoint(['vault.created'], own.key);
    try {
      const tested = await call('POST', `/v1/webhooks/${id}/test`, undefined, own.key);
      expect(tested.body).toMatchObject({
        object: 'webhook_test',
        delivered: true,
        statusCode: 200,
      });
      const [delivery] = receiver.received;
      expect([delivery?.type, delivery?.verified, delivery?.id]).toEqual([
        'webhook.test',
        true,
        tested.body.eventId,
      ]);
      receiver.answer = () => 500;
      const failing = await call('POST', `/v1/webhooks/${id}/test`, undefined, own.key);
      expect(failing.body).toMatchObject({ delivered: false, statusCode: 500 });
      // The test goes to this endpoint alone: the relay never fans it out.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.received).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('never sends an event for a change that rolled back', async () => {
    const own = await service.key();
    const { receiver } = await endpoint(['*'], own.key);
    try {
      const poor = (
        await call(
          'POST',
          '/v1/vaults',
          { name: 'P', currency: 'USDC', network: 'solana', initialDeposit: '1' },
          own.key,
        )
      ).body;
      const rich = (
        await call(
          'POST',
          '/v1/vaults',
          { name: 'Q', currency: 'USDC', network: 'solana' },
          own.key,
        )
      ).body;
      const refused = await call(
        'POST',
        '/v1/transfers',
        { fromVaultId: poor.id, toVaultId: rich.id, amount: '2' },
        own.key,
      );
      expect(refused.status).toBe(402);
      await call('PATCH', `/v1/vaults/${poor.id}`, { name: 'marker' }, own.key);
      await receiver.until(1, 'vault.updated');
      expect(
        receiver.received
          .map((delivery) => delivery.type)
          .filter((type) => type.startsWith('transfer')),
      ).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses endpoints that are not allowed, and names the field', async () => {
    const live = await service.key({ mode: 'live' });
    for (const url of [
      'http://example.com/hook',
      'https://127.0.0.1/hook',
      'https://10.0.0.1/hook',
      'ftp://example.com/',
    ]) {
      const refused = await call('POST', '/v1/webhooks', { url, events: ['*'] }, live.key);
      expect([url, refused.status, refused.body.error?.code, refused.body.error?.param]).toEqual([
        url,
        400,
        'parameter_invalid',
        'url',
      ]);
    }
    const badEvent = await call('POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:1/x',
      events: ['vault.exploded'],
    });
    expect([badEvent.status, badEvent.body.error?.param]).toEqual([400, 'events[0]']);
    const stranger = await service.key();
    const { receiver, id } = await endpoint(['*']);
    try {
      for (const [method, path] of [
        ['DELETE', `/v1/webhooks/${id}`],
        ['POST', `/v1/webhooks/${id}/test`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
      ] as const) {
        const answer = await call(method, path, undefined, stranger.key);
        expect([path, answer.status, answer.body.error?.code]).toEqual([
          path,
          404,
          'webhook_not_found',
        ]);
      }
    } finally {
      await receiver.close();
    }
  });
});
