/**
 * The local Solana cluster for test mode (contract section 12): solana-bankrun behind
 * a loopback JSON-RPC endpoint whose treasury is funded at start, so that the sandbox, the
 * transfer worker and the tests run with no network at all, through the same web3.js code path
 * as against a real cluster.
 *
 *   const solana = await startLocalSolana();
 *   // SOLANA_TEST_RPC_URL = solana.url; the treasury signs transfers
 *   await solana.close();
 *
 * Slots: the chain moves one block on per landed transaction, by `advanceSlots(n)`, and, unless
 * `slotIntervalMs` is 0, one block per interval like a real cluster (so that a dropped
 * transaction's blockhash expires by itself). A blockhash stays valid 300 blocks here (the
 * `lastValidBlockHeight` from getLatestBlockhash is authoritative; mainnet: about 150).
 */
import { Connection, Keypair, type Commitment, type PublicKey } from '@solana/web3.js';
import { start } from 'solana-bankrun';
import { LocalChain } from './chain.js';
import {
  buildGenesis,
  DEFAULT_TREASURY_LAMPORTS,
  DEFAULT_USDC_TREASURY_UNITS,
  defaultRentExemptLamports,
  USDC_DECIMALS,
} from './genesis.js';
import { LocalPriceFeeds, type PriceUpdate } from './price-feeds.js';
import { startLocalRpc } from './rpc-server.js';

export {
  DEFAULT_TREASURY_LAMPORTS,
  DEFAULT_USDC_TREASURY_UNITS,
  LAMPORTS_PER_SOL,
  USDC_DECIMALS,
} from './genesis.js';
export { ADVANCE_SLOTS_MAX, RECORDED_SIGNATURES_MAX } from './chain.js';
export {
  LOCAL_ORACLE_PROGRAM,
  LOCAL_PRICE_FEEDS,
  PriceUpdateError,
  type PriceUpdate,
} from './price-feeds.js';
export { encodePriceAccount, type PriceAccountFields } from './pyth-price-account.js';
export { toTransactionError, type TransactionErrorJson } from './transaction-error.js';

/** A real cluster makes a block about every 400 ms. */
export const DEFAULT_SLOT_INTERVAL_MS = 400;

export interface LocalSolanaOptions {
  /** Loopback only. Default 127.0.0.1. */
  host?: string;
  /** HTTP port (the websocket is port + 1). Default 0: any free pair. */
  port?: number;
  /** Default: a new keypair. */
  treasury?: Keypair;
  /** Default 1,000 SOL. */
  treasuryLamports?: bigint;
  /** Default 1,000,000 USDC (in units of 10^-6). */
  usdcTreasuryUnits?: bigint;
  /** Default: a new keypair. */
  usdcMintAuthority?: Keypair;
  /** Default: a new keypair (its public key is the mint address). */
  usdcMint?: Keypair;
  /** One block per interval; 0: only transactions and advanceSlots move the chain. Default 400. */
  slotIntervalMs?: number;
}

export interface LocalSolana {
  /** The HTTP JSON-RPC endpoint: what SOLANA_TEST_RPC_URL points at. */
  url: string;
  /** The websocket endpoint (HTTP port + 1, where web3.js looks for it). */
  wsUrl: string;
  treasury: Keypair;
  treasuryUsdcAccount: PublicKey;
  usdcMint: PublicKey;
  /** Signs mint-to instructions, so tests can create more USDC. */
  usdcMintAuthority: Keypair;
  usdcDecimals: number;
  connection(commitment?: Commitment): Connection;
  /** Sets a price feed (SOL/USD, USDC/USD, EUR/USD, GBP/USD): its account is written at once. */
  setPrice(pair: string, update: PriceUpdate): Promise<void>;
  /** Deletes a price feed's account (a feed missing from the cluster), until set again. */
  removePrice(pair: string): Promise<void>;
  /** Moves the chain `blocks` blocks on; resolves to the new slot. */
  advanceSlots(blocks: number): Promise<number>;
  close(): Promise<void>;
}

/** One block per interval, like a real cluster; a tick still running skips the next. */
function startSlotTicker(chain: LocalChain, intervalMs: number): NodeJS.Timeout {
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return;
    ticking = true;
    chain
      .advanceSlots(1)
      .catch(() => undefined)
      .finally(() => {
        ticking = false;
      });
  }, intervalMs);
  timer.unref();
  return timer;
}

export async function startLocalSolana(options: LocalSolanaOptions = {}): Promise<LocalSolana> {
  const treasury = options.treasury ?? Keypair.generate();
  const usdcMint = options.usdcMint ?? Keypair.generate();
  const usdcMintAuthority = options.usdcMintAuthority ?? Keypair.generate();
  const slotIntervalMs = options.slotIntervalMs ?? DEFAULT_SLOT_INTERVAL_MS;
  if (!Number.isInteger(slotIntervalMs) || slotIntervalMs < 0) {
    throw new RangeError(`slotIntervalMs must be a non-negative integer, got ${slotIntervalMs}`);
  }
  const genesis = buildGenesis({
    treasury,
    treasuryLamports: options.treasuryLamports ?? DEFAULT_TREASURY_LAMPORTS,
    usdcMint,
    usdcMintAuthority,
    usdcTreasuryUnits: options.usdcTreasuryUnits ?? DEFAULT_USDC_TREASURY_UNITS,
  });
  // The runtime logs every instruction at debug level to stderr unless RUST_LOG says otherwise
  // (read once, at the first start in the process).
  process.env.RUST_LOG ??= 'error';
  const context = await start([], genesis.accounts);
  const rent = await context.banksClient.getRent();
  if (rent.minimumBalance(82n) !== defaultRentExemptLamports(82)) {
    throw new Error('the runtime rent differs from the default the genesis accounts assume');
  }
  const chain = new LocalChain(context);
  const priceFeeds = new LocalPriceFeeds(chain);
  await priceFeeds.start();
  const server = await startLocalRpc(
    chain,
    {
      genesisHash: context.lastBlockhash,
      usdcFaucet: { mint: usdcMint.publicKey, authority: usdcMintAuthority, payer: treasury },
      priceFeeds,
    },
    { host: options.host ?? '127.0.0.1', port: options.port ?? 0 },
  );
  const timer = slotIntervalMs === 0 ? null : startSlotTicker(chain, slotIntervalMs);
  let closed: Promise<void> | null = null;
  return {
    url: server.url,
    wsUrl: server.wsUrl,
    treasury,
    treasuryUsdcAccount: genesis.treasuryUsdcAccount,
    usdcMint: usdcMint.publicKey,
    usdcMintAuthority,
    usdcDecimals: USDC_DECIMALS,
    connection: (commitment: Commitment = 'confirmed') =>
      new Connection(server.url, { commitment, wsEndpoint: server.wsUrl }),
    setPrice: (pair, update) => priceFeeds.set(pair, update),
    removePrice: (pair) => priceFeeds.remove(pair),
    advanceSlots: (blocks) => chain.advanceSlots(blocks),
    close: () => {
      closed ??= (async () => {
        if (timer !== null) clearInterval(timer);
        priceFeeds.stop();
        await server.close();
        // Let queued state changes finish before the runtime is dropped.
        await chain.serialize(() => Promise.resolve());
      })();
      return closed;
    },
  };
}
