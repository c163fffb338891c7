import { get, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/index.js';
import { EventHub } from '../../src/http/event-hub.js';
import type { Store } from '../../src/store/store.js';
import { authorizeThroughStore } from '../support/authorize.js';
import { startTestService, type TestService } from '../support/http.js';

/**
 * Stream Events (GET /v1/events/stream) over real HTTP: the caller's authorization events as
 * server-sent events as they commit, never another account's or mode's; bounded streams per
 * account, freed when a client goes; and the hub's one read of the outbox per tick, however
 * many listen.
 */

interface StreamEvent {
  type: string;
  id: string;
  data: { type: string; data: { object: { id: string; status: string; amount: string } } };
}

/** An open stream: its status, and the events read so far (until `close`). */
interface OpenStream {
  readonly status: number;
  readonly body: unknown;
  readonly events: StreamEvent[];
  readonly text: () => string;
  next(count: number): Promise<StreamEvent[]>;
  close(): void;
}

/**
 * A stream read with node:http on a connection of its own (no agent): fetch's pool opens a
 * spare connection after an abort, which would hold the server's close.
 */
async function openStream(
  base: string,
  key: string,
  headers: Record<string, string> = {},
): Promise<OpenStream> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    get(`${base}/v1/events/stream`, {
      agent: false,
      headers: { authorization: `Bearer ${key}`, ...headers },
    })
      .on('response', resolve)
      .on('error', reject);
  });
  response.setEncoding('utf8');
  if (response.statusCode !== 200) {
    let body = '';
    for await (const chunk of response) body += chunk as string;
    return {
      status: response.statusCode ?? 0,
      body: JSON.parse(body) as unknown,
      events: [],
      text: () => '',
      next: () => Promise.reject(new Error('no stream')),
      close: () => undefined,
    };
  }
  const events: StreamEvent[] = [];
  let text = '';
  let wake: (() => void) | null = null;
  response.on('data', (chunk: string) => {
    text += chunk;
    let end = text.indexOf('\n\n');
    while (end >= 0) {
      const event = parseBlock(text.slice(0, end));
      text = text.slice(end + 2);
      if (event !== null) {
        events.push(event);
        wake?.();
      }
      end = text.indexOf('\n\n');
    }
  });
  response.on('error', () => undefined);
  return {
    status: 200,
    body: null,
    events,
    text: () => text,
    async next(count) {
      while (events.length < count) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      return events.slice(0, count);
    },
    close: () => {
      response.destroy();
    },
  };
}

/** One server-sent event's lines; null for a comment (the greeting, a heartbeat). */
function parseBlock(block: string): StreamEvent | null {
  const fields = Object.fromEntries(
    block
      .split('\n')
      .filter((line) => !line.startsWith(':'))
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  ) as Record<string, string>;
  const data = fields['data'];
  if (data === undefined) return null;
  return {
    type: fields['event'] ?? '',
    id: fields['id'] ?? '',
    data: JSON.parse(data) as StreamEvent['data'],
  };
}

describe('Stream Events', () => {
  let service: TestService;
  let owner: { key: string; scope: Scope };
  let vaultId: string;

  beforeAll(async () => {
    service = await startTestService({ redis: null });
    owner = await service.key();
    const vault = await service.request(owner.key, 'POST', '/v1/vaults', {
      name: 'Live',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    vaultId = (vault.body as { id: string }).id;
  });

  afterAll(async () => {
    await service?.close();
  });

  it("streams the caller's decisions as they commit, and nobody else's", async () => {
    const stream = await openStream(service.base, owner.key);
    expect(stream.status).toBe(200);
    // Another account, and the owner's live mode, each with a stream and a decision of its own.
    const stranger = await service.key();
    const strangerStream = await openStream(service.base, stranger.key);
    const strangerVault = await service.request(stranger.key, 'POST', '/v1/vaults', {
      name: 'Other',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    const strangerVaultId = (strangerVault.body as { id: string }).id;
    await authorizeThroughStore(service.store, stranger.scope, strangerVaultId, '1');

    const approved = await authorizeThroughStore(service.store, owner.scope, vaultId, '30');
    const declined = await authorizeThroughStore(service.store, owner.scope, vaultId, '500');
    expect([approved.approved, declined.approved]).toEqual([true, false]);
    const [first, second] = await stream.next(2);
    expect([first?.type, second?.type]).toEqual([
      'authorization.approved',
      'authorization.declined',
    ]);
    expect(first?.data.data.object).toMatchObject({ id: approved.transactionId, amount: '30.00' });
    expect(second?.data.data.object).toMatchObject({
      id: declined.transactionId,
      status: 'declined',
    });
    expect(first?.id).toMatch(/^evt_/);

    const [strangers] = await strangerStream.next(1);
    expect(strangers?.data.data.object.amount).toBe('1.00');
    // A third decision of the owner's arrives after the stranger's: by then, had the stranger's
    // event been sent to the owner, it would be in the owner's stream.
    const third = await authorizeThroughStore(service.store, owner.scope, vaultId, '2');
    const events = await stream.next(3);
    expect(events.map((event) => event.data.data.object.id)).toEqual([
      approved.transactionId,
      declined.transactionId,
      third.transactionId,
    ]);
    expect(strangerStream.events).toHaveLength(1);
    stream.close();
    strangerStream.close();
  });

  it('resumes after Last-Event-ID: what was missed first, then the live ones, each once', async () => {
    const resumer = await service.key();
    const vault = await service.request(resumer.key, 'POST', '/v1/vaults', {
      name: 'Resumed',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '100',
    });
    const resumedVault = (vault.body as { id: string }).id;
    const first = await openStream(service.base, resumer.key);
    const seen = await authorizeThroughStore(service.store, resumer.scope, resumedVault, '1');
    const [seenEvent] = await first.next(1);
    expect(seenEvent?.data.data.object.id).toBe(seen.transactionId);
    first.close();
    // Decided while no stream was open: only a resume can bring them.
    const missed = [
      await authorizeThroughStore(service.store, resumer.scope, resumedVault, '2'),
      await authorizeThroughStore(service.store, resumer.scope, resumedVault, '3'),
    ];
    const resumed = await openStream(service.base, resumer.key, {
      'last-event-id': seenEvent?.id ?? '',
    });
    const live = await authorizeThroughStore(service.store, resumer.scope, resumedVault, '4');
    const events = await resumed.next(3);
    expect(events.map((event) => event.data.data.object.id)).toEqual([
      ...missed.map((decision) => decision.transactionId),
      live.transactionId,
    ]);
    // Nothing more: the live one is not written twice (once read, once handed on).
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(resumed.events).toHaveLength(3);
    resumed.close();
    // Without the header (or with one that is no event id), only what comes next.
    const fresh = await openStream(service.base, resumer.key, { 'last-event-id': 'nonsense' });
    const after = await authorizeThroughStore(service.store, resumer.scope, resumedVault, '5');
    const [only] = await fresh.next(1);
    expect(only?.data.data.object.id).toBe(after.transactionId);
    fresh.close();
  });

  it('refuses a key without transactions:read, and past 10 streams per account', async () => {
    const narrow = await service.key({ scopes: ['vaults:read'] });
    const refused = await openStream(service.base, narrow.key);
    expect([refused.status, (refused.body as { error: { code: string } }).error.code]).toEqual([
      403,
      'insufficient_scope',
    ]);
    const crowd = await service.key();
    const streams = await Promise.all(
      Array.from({ length: 10 }, () => openStream(service.base, crowd.key)),
    );
    expect(streams.map((stream) => stream.status)).toEqual(Array(10).fill(200));
    const eleventh = await openStream(service.base, crowd.key);
    expect([eleventh.status, (eleventh.body as { error: { code: string } }).error.code]).toEqual([
      503,
      'service_unavailable',
    ]);
    // A client that goes frees its place: closed streams are taken off at once.
    for (const stream of streams) stream.close();
    let reopened = await openStream(service.base, crowd.key);
    // The server learns of each close when its socket ends: wait for one place to be free.
    while (reopened.status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      reopened = await openStream(service.base, crowd.key);
    }
    expect(reopened.status).toBe(200);
    reopened.close();
  });

  it('reads the outbox once per poll however many subscribe, each event handed on once', async () => {
    let reads = 0;
    const counted = new Proxy(service.store, {
      get(target, property, receiver) {
        if (property === 'eventsAfter') {
          return (...args: Parameters<Store['eventsAfter']>) => {
            reads += 1;
            return target.eventsAfter(...args);
          };
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    // Polled by hand: the timer's interval is far longer than the test.
    const hub = new EventHub(counted, { pollMs: 3_600_000, subscribersPerAccountMax: 50 });
    const received: string[] = [];
    const removals = Array.from({ length: 20 }, () =>
      hub.subscribe(owner.scope, { send: (event) => received.push(event.id) }),
    );
    const decided = await authorizeThroughStore(service.store, owner.scope, vaultId, '3');
    expect(decided.approved).toBe(true);
    await hub.poll();
    // One read served all twenty subscribers; the event went to each once.
    expect(reads).toBe(1);
    expect(received).toHaveLength(20);
    expect(new Set(received).size).toBe(1);
    await hub.poll();
    expect([reads, received.length]).toEqual([2, 20]);
    for (const remove of removals) remove();
    expect(hub.subscriberCount).toBe(0);
    hub.close();
  });
});
