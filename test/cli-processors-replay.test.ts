import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReplayArgs, replay } from '../src/cli/processors-replay.js';
import { useTestService } from './support/http.js';
import { LIFE_MERCHANT, processorTestKit } from './support/processors.js';

/**
 * `spendgate processors replay stripe|lithic|marqeta FILE --to URL`: the sequences shipped in
 * docs/processors/ are sent, signed as each processor signs, to a real server, each taken.
 * Stripe's together end in the ledger their descriptions say; each of Lithic's and Marqeta's
 * ends in the same ledger as the same sequence sent to spendgate's own routes.
 */
interface Json {
  id: string;
  approved?: boolean;
  balance?: { available: string; pending: string; ledger: string };
  data?: Record<string, unknown>[];
}

const SECRET = 'whsec_replay_test_secret';
const DOCS = new URL('../docs/processors/', import.meta.url);

describe('processors replay', () => {
  const harness = useTestService<Json>();
  const { setUp, balanceOf } = processorTestKit(harness, {
    processor: 'stripe',
    signingSecret: SECRET,
  });

  it('sends every shipped Stripe sequence, each message taken, to the ledger they describe', async () => {
    const { connectionId, vaultId } = await setUp('1000', 'ic_replay');
    const files = readdirSync(DOCS)
      .filter((name) => name.startsWith('stripe-'))
      .sort();
    expect(files).toEqual([
      'stripe-advice-after-outage.json',
      'stripe-hotel-stay.json',
      'stripe-refund.json',
      'stripe-restaurant-tip.json',
    ]);
    const to = `${harness.service.base}/v1/processors/stripe/${connectionId}`;
    for (const file of files) {
      const args = parseReplayArgs(['replay', 'stripe', new URL(file, DOCS).pathname, '--to', to]);
      const result = await replay(args, SECRET);
      expect(result.ok, result.lines.join('\n')).toBe(true);
      expect(result.lines.length).toBeGreaterThan(2);
    }
    // 1000 - 240 (hotel, late) - 60 (dinner and tip) - 30 + 12 (refund) - 45 (after the outage).
    expect(await balanceOf(vaultId)).toEqual({
      available: '637.00',
      pending: '0.00',
      ledger: '637.00',
    });
    // Signed with another secret: the first message is refused, and the replay stops there.
    const forged = await replay(
      parseReplayArgs(['replay', 'stripe', new URL(files[0] ?? '', DOCS).pathname, '--to', to]),
      'whsec_not_this_connections',
    );
    expect(forged.ok).toBe(false);
    expect(forged.lines.at(-1)).toContain('400');
  });

  it('refuses a command it cannot run as a usage error', () => {
    for (const argv of [
      ['replay', 'stripe', 'file.json'],
      ['replay', 'stripe', 'file.json', '--to', 'not-a-url'],
      ['replay', 'adyen', 'file.json', '--to', 'http://127.0.0.1:3000/x'],
      ['play', 'stripe', 'file.json', '--to', 'http://127.0.0.1:3000/x'],
      ['replay', 'stripe', 'file.json', '--to', 'http://127.0.0.1:3000/x', '--secret', 'x'],
    ]) {
      expect(() => parseReplayArgs(argv), argv.join(' ')).toThrow(/usage: spendgate processors/);
    }
  });
});

/** One step of a sequence as spendgate's own routes take it; `of` names an earlier step. */
type RouteStep =
  | { readonly authorize: string; readonly id: string }
  | { readonly advice: string; readonly id: string; readonly reason: string }
  | { readonly increment: string; readonly of: string }
  | { readonly capture: string; readonly of: string; readonly final: boolean }
  | { readonly refund: string; readonly of: string };

/**
 * Each shipped Lithic and Marqeta file, as the same sequence sent to the routes. The files'
 * amounts are the same for both processors; only the advice's reason is the processor's.
 */
const SEQUENCES: Readonly<Record<string, (adviceReason: string) => readonly RouteStep[]>> = {
  'hotel-stay': () => [
    { authorize: '100.00', id: 'stay' },
    { increment: '30.00', of: 'stay' },
    { capture: '120.00', of: 'stay', final: true },
  ],
  'restaurant-tip': () => [
    { authorize: '50.00', id: 'bill' },
    { capture: '60.00', of: 'bill', final: true },
  ],
  refund: () => [
    { authorize: '30.00', id: 'buy' },
    { capture: '30.00', of: 'buy', final: true },
    { refund: '12.00', of: 'buy' },
  ],
  'advice-after-outage': (reason) => [
    { advice: '45.00', id: 'outage', reason },
    { capture: '45.00', of: 'outage', final: true },
  ],
};

const LITHIC_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const MARQETA = { username: 'replay_gateway', password: 'replay-gateway-password' };

describe.each([
  {
    processor: 'lithic' as const,
    connection: { processor: 'lithic', asaSecret: LITHIC_SECRET },
    secret: LITHIC_SECRET,
    adviceReason: 'CUSTOMER_ASA_TIMEOUT',
  },
  {
    processor: 'marqeta' as const,
    connection: { processor: 'marqeta', ...MARQETA },
    secret: `${MARQETA.username}:${MARQETA.password}`,
    adviceReason: 'marqeta_advice',
  },
])('processors replay $processor', ({ processor, connection, secret, adviceReason }) => {
  const harness = useTestService<Json>();
  const { call } = harness;
  const { setUp, ledgerOf } = processorTestKit(harness, connection);

  const throughRoutes = async (cardId: string, steps: readonly RouteStep[]) => {
    const ids = new Map<string, string>();
    const idOf = (name: string) => ids.get(name) ?? '';
    const asking = (amount: string, name: string) => ({
      cardId,
      amount,
      currency: 'USD',
      merchant: LIFE_MERCHANT,
      networkTransactionId: `route_${name}`,
    });
    for (const step of steps) {
      let answer;
      if ('authorize' in step) {
        answer = await call('POST', '/v1/authorizations', asking(step.authorize, step.id));
        ids.set(step.id, answer.body.id);
      } else if ('advice' in step) {
        answer = await call('POST', '/v1/authorizations/advice', {
          ...asking(step.advice, step.id),
          approved: true,
          reason: step.reason,
        });
        ids.set(step.id, answer.body.id);
      } else if ('increment' in step)
        answer = await call('POST', `/v1/authorizations/${idOf(step.of)}/increment`, {
          amount: step.increment,
          networkTransactionId: `route_inc_${step.of}`,
        });
      else if ('capture' in step)
        answer = await call('POST', `/v1/authorizations/${idOf(step.of)}/capture`, {
          amount: step.capture,
          final: step.final,
        });
      else
        answer = await call('POST', '/v1/refunds', {
          ...asking(step.refund, `refund_${step.of}`),
          transactionId: idOf(step.of),
        });
      expect(answer.status, JSON.stringify(step)).toBeLessThan(300);
    }
  };

  it('sends every shipped file, each message taken, to the ledger the routes end in', async () => {
    const files = readdirSync(DOCS)
      .filter((name) => name.startsWith(`${processor}-`))
      .sort();
    expect(files).toEqual(
      Object.keys(SEQUENCES)
        .map((name) => `${processor}-${name}.json`)
        .sort(),
    );
    for (const file of files) {
      const viaReplay = await setUp('500', 'card_replay');
      const viaRoutes = await setUp('500', null);
      const to = `${harness.service.base}/v1/processors/${processor}/${viaReplay.connectionId}`;
      const args = parseReplayArgs(['replay', processor, new URL(file, DOCS).pathname, '--to', to]);
      const result = await replay({ ...args, card: 'card_replay' }, secret);
      expect(result.ok, `${file}: ${result.lines.join('\n')}`).toBe(true);
      const sequence = SEQUENCES[file.slice(processor.length + 1, -'.json'.length)];
      await throughRoutes(viaRoutes.cardId, sequence?.(adviceReason) ?? []);
      const replayed = await ledgerOf(viaReplay.vaultId);
      expect(replayed.transactions.length, file).toBeGreaterThan(0);
      expect(replayed, file).toEqual(await ledgerOf(viaRoutes.vaultId));
    }
  });
});
