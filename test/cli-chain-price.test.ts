import { PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRICE_FEEDS, startLocalSolana, type LocalSolana } from '../src/local-chain/index.js';
import { parsePriceAccount } from '../src/solana/price-feeds.js';
import { startCliProcess, stopAll } from './support/processes.js';

/**
 * `spendgate chain price` as a user runs it, against the local runtime over loopback: the
 * feed's Pyth price account on chain holds the new price, read back by the live parser; refused
 * outside test mode and for a malformed price or an unknown pair.
 */
describe('spendgate chain price', () => {
  let chain: LocalSolana;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
  });

  afterAll(async () => {
    await stopAll();
    await chain.close();
  });

  const run = async (args: string[], env: Record<string, string> = {}) => {
    const child = startCliProcess(['chain', 'price', ...args], {
      SPENDGATE_MODES: 'test',
      SOLANA_TEST_RPC_URL: chain.url,
      ...env,
    });
    const { code } = await child.exited;
    return { code, output: child.output() };
  };

  async function onChain(pair: string) {
    const address = new PublicKey(LOCAL_PRICE_FEEDS[pair] ?? '');
    const { context, value } = await chain.connection().getAccountInfoAndContext(address);
    if (value === null) throw new Error(`no ${pair} account`);
    const read = parsePriceAccount(pair, address.toBase58(), value.data, context.slot);
    if (read.kind !== 'reading') throw new Error(read.failure);
    return read.reading;
  }

  it('sets a feed on chain, in the Pyth layout the live parser reads', async () => {
    const set = await run(['SOL/USD', '142.17']);
    expect(set.code, set.output).toBe(0);
    expect(set.output).toContain('SOL/USD set to 142.17');
    const reading = await onChain('SOL/USD');
    expect([reading.priceUnits, reading.exponent, reading.trading]).toEqual([
      14_217_000_000n,
      -8,
      true,
    ]);
    expect(Math.abs(Number(reading.publishTimeSec) * 1000 - Date.now())).toBeLessThan(5_000);
    const wide = await run(['EUR/USD', '1.0712', '--confidence', '0.05']);
    expect(wide.code, wide.output).toBe(0);
    expect((await onChain('EUR/USD')).confidenceUnits).toBe(5_000_000n);
  }, 60_000);

  it('refuses outside test mode, a malformed price and an unknown pair', async () => {
    const live = await run(['SOL/USD', '1'], { SPENDGATE_MODES: 'test,live' });
    expect([live.code, live.output]).toEqual([1, expect.stringContaining('test mode only')]);
    const bad = await run(['SOL/USD', '-3']);
    expect([bad.code, bad.output]).toEqual([2, expect.stringContaining('at most 8 decimals')]);
    const unknown = await run(['BTC/USD', '90000']);
    expect([unknown.code, unknown.output]).toEqual([
      1,
      expect.stringContaining('no local feed BTC/USD'),
    ]);
    // Nothing changed on chain by the refusals.
    expect((await onChain('SOL/USD')).priceUnits).toBe(14_217_000_000n);
  }, 60_000);
});
