import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReplayArgs, replay } from '../src/cli/processors-replay.js';
import { useTestService } from './support/http.js';
import { processorTestKit } from './support/processors.js';

/**
 * `spendgate processors replay stripe FILE --to URL`: the sequences shipped in
 * docs/processors/ are sent, signed as Stripe signs, to a real server, each taken; together
 * they end in the ledger their descriptions say.
 */
interface Json {
  id: string;
  balance?: { available: string; pending: string; ledger: string };
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
