import { ConfigError, type Settings } from '../config/env.js';
import { UsageError } from './keys.js';

/*
 * `spendgate chain price PAIR PRICE [--confidence X] [--rpc URL]`, test mode only: sets a price
 * feed of the local Solana runtime (SOL/USD, USDC/USD, EUR/USD, GBP/USD), whose Pyth price
 * account is written at once; the service reads it back like any feed, within PRICE_POLL_MS
 * (docs/pricing.md). The cluster: --rpc, else SOLANA_TEST_RPC_URL (`spendgate serve` logs its
 * local runtime as `localSolanaRpc`). Only the local runtime answers `setPythPrice`.
 */

export const CHAIN_PRICE_USAGE =
  'usage: spendgate chain price PAIR PRICE [--confidence X] [--rpc URL]   (PAIR: SOL/USD, USDC/USD, EUR/USD, GBP/USD)';

const DECIMAL = /^[0-9]{1,12}(\.[0-9]{1,8})?$/;

interface PriceArguments {
  readonly pair: string;
  readonly price: string;
  readonly confidence: string | null;
  readonly rpc: string | null;
}

function parseArguments(argv: readonly string[]): PriceArguments {
  const [command, pair, price, ...rest] = argv;
  if (command !== 'price' || pair === undefined || price === undefined || rest.length % 2 !== 0) {
    throw new UsageError(CHAIN_PRICE_USAGE);
  }
  const flags = new Map<string, string>();
  for (let index = 0; index < rest.length; index += 2) {
    const [flag, value] = [rest[index], rest[index + 1]];
    if (flag === undefined || value === undefined || flags.has(flag)) {
      throw new UsageError(CHAIN_PRICE_USAGE);
    }
    if (flag !== '--confidence' && flag !== '--rpc') throw new UsageError(CHAIN_PRICE_USAGE);
    flags.set(flag, value);
  }
  const confidence = flags.get('--confidence') ?? null;
  if (!DECIMAL.test(price) || (confidence !== null && !DECIMAL.test(confidence))) {
    throw new UsageError(
      `PRICE and --confidence are decimals with at most 8 decimals\n${CHAIN_PRICE_USAGE}`,
    );
  }
  return { pair, price, confidence, rpc: flags.get('--rpc') ?? null };
}

/** Runs the command; answers the lines to print. */
export async function runChainPrice(
  settings: Settings,
  argv: readonly string[],
): Promise<string[]> {
  const args = parseArguments(argv);
  if (settings.modes.includes('live')) {
    throw new ConfigError('chain price is for test mode only: set SPENDGATE_MODES=test');
  }
  const url = args.rpc ?? settings.solana.testRpcUrl;
  if (url === null) {
    throw new ConfigError(
      'chain price needs the local runtime: --rpc URL or SOLANA_TEST_RPC_URL (spendgate serve logs it as localSolanaRpc)',
    );
  }
  const update = {
    price: args.price,
    ...(args.confidence === null ? {} : { confidence: args.confidence }),
  };
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'setPythPrice',
      params: [args.pair, update],
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (body.error !== undefined) throw new ConfigError(`setPythPrice: ${body.error.message}`);
  return [`${args.pair} set to ${args.price} on ${url}`];
}
