import { PublicKey } from '@solana/web3.js';
import type { LocalChain } from './chain.js';
import { defaultRentExemptLamports } from './genesis.js';
import { invalidParam, stringParam } from './rpc-protocol.js';
import {
  encodePriceAccount,
  PRICE_ACCOUNT_SIZE,
  PRICE_EXPONENT,
  priceUnitsOf,
  type PriceStatusName,
} from './pyth-price-account.js';

/*
 * The local runtime's price feeds: SOL/USD, USDC/USD, EUR/USD and GBP/USD as Pyth price
 * accounts (pyth-price-account.ts), at the addresses PRICE_TEST_FEEDS names by default, owned
 * by Pyth's devnet oracle program (PRICE_TEST_ORACLE_PROGRAM's default). Like a live feed, each
 * is published again every second with the wall clock's time, until a test pins its publish
 * time (a stale feed) or removes the account (a missing feed).
 */

/** Where the local runtime keeps each feed: config/env.ts DEFAULT_TEST_PRICE_FEEDS. */
export const LOCAL_PRICE_FEEDS: Readonly<Record<string, string>> = {
  'SOL/USD': '4n3uSFvzir3GWugf4JzUqdgrp1H9HpgR4eGQS3WArrR5',
  'USDC/USD': '7hRwGAKDCKNRiP28Ef5HL5xwEZSfA8z1GWHLvW8H5fEr',
  'EUR/USD': '6hAtg9rmMRbSZk9YoUuzp4m8KLBZetKZDzZv156wJfhg',
  'GBP/USD': '9A8roEWk1UivBja5svr35z7ty2HcVDFNqwPxYLDBBYBu',
};

/** Pyth's devnet oracle program: the owner of the local price accounts. */
export const LOCAL_ORACLE_PROGRAM = new PublicKey('gSbePebfvPy7tRqimPoVecS2UsBvYv46ynrzWocc92s');

/** The prices the local feeds start at (a sandbox works at once). */
const STARTING_PRICES: Readonly<Record<string, string>> = {
  'SOL/USD': '150',
  'USDC/USD': '1',
  'EUR/USD': '1.08',
  'GBP/USD': '1.27',
};

/** How often the feeds are published again with a fresh time. */
export const REPUBLISH_MS = 1_000;

/** A price to set: `142.17`, at most 8 decimals; by default confidence 0.01% and published now. */
export interface PriceUpdate {
  readonly price: string;
  readonly confidence?: string;
  /** Unix seconds, pinned (the feed then goes stale); absent: the wall clock, kept fresh. */
  readonly publishTimeSec?: number;
  readonly status?: PriceStatusName;
}

interface FeedState {
  readonly priceUnits: bigint;
  readonly confidenceUnits: bigint;
  readonly publishTimeSec: number | null;
  readonly status: PriceStatusName;
  /** Removed: the account is deleted, and stays so until a price is set again. */
  readonly removed: boolean;
}

export class PriceUpdateError extends Error {
  override readonly name = 'PriceUpdateError';
}

function stateOf(update: PriceUpdate): FeedState {
  const priceUnits = priceUnitsOf(update.price);
  if (priceUnits === null || priceUnits === 0n) {
    throw new PriceUpdateError('price must be a positive decimal with at most 8 decimals');
  }
  const confidenceUnits =
    update.confidence === undefined ? priceUnits / 10_000n : priceUnitsOf(update.confidence);
  if (confidenceUnits === null) {
    throw new PriceUpdateError('confidence must be a decimal with at most 8 decimals');
  }
  const pinned = update.publishTimeSec ?? null;
  if (pinned !== null && (!Number.isSafeInteger(pinned) || pinned < 0)) {
    throw new PriceUpdateError('publishTime must be whole unix seconds');
  }
  return {
    priceUnits,
    confidenceUnits,
    publishTimeSec: pinned,
    status: update.status ?? 'trading',
    removed: false,
  };
}

export class LocalPriceFeeds {
  readonly #chain: LocalChain;
  readonly #feeds = new Map<string, FeedState>();
  #timer: NodeJS.Timeout | null = null;

  constructor(chain: LocalChain) {
    this.#chain = chain;
    for (const [pair, price] of Object.entries(STARTING_PRICES)) {
      this.#feeds.set(pair, stateOf({ price }));
    }
  }

  /** Writes every feed now, then again every REPUBLISH_MS. */
  async start(): Promise<void> {
    await this.publish();
    this.#timer = setInterval(() => {
      this.publish().catch(() => undefined);
    }, REPUBLISH_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Sets a feed's price (and writes its account at once). */
  async set(pair: string, update: PriceUpdate): Promise<void> {
    if (LOCAL_PRICE_FEEDS[pair] === undefined) {
      throw new PriceUpdateError(
        `no local feed ${pair.slice(0, 16)}: one of ${Object.keys(LOCAL_PRICE_FEEDS).join(', ')}`,
      );
    }
    this.#feeds.set(pair, stateOf(update));
    await this.publish();
  }

  /** Deletes a feed's account, as a feed that does not exist on the cluster. */
  async remove(pair: string): Promise<void> {
    const state = this.#feeds.get(pair);
    if (state === undefined) throw new PriceUpdateError(`no local feed ${pair.slice(0, 16)}`);
    this.#feeds.set(pair, { ...state, removed: true });
    await this.publish();
  }

  /** Writes each feed's account as its state says, with the chain's slot. */
  publish(): Promise<void> {
    return this.#chain.serialize(async () => {
      const slot = await this.#chain.banks.getSlot();
      const nowSec = Math.floor(Date.now() / 1000);
      for (const [pair, state] of this.#feeds) {
        const address = new PublicKey(LOCAL_PRICE_FEEDS[pair] ?? '');
        this.#chain.context.setAccount(address, {
          lamports: state.removed ? 0 : Number(defaultRentExemptLamports(PRICE_ACCOUNT_SIZE)),
          data: state.removed
            ? new Uint8Array(0)
            : encodePriceAccount({
                priceUnits: state.priceUnits,
                confidenceUnits: state.confidenceUnits,
                exponent: PRICE_EXPONENT,
                publishTimeSec: BigInt(state.publishTimeSec ?? nowSec),
                slot,
                status: state.status,
              }),
          owner: LOCAL_ORACLE_PROGRAM,
          executable: false,
        });
      }
    });
  }
}

/**
 * `setPythPrice` [pair, {price, confidence?, publishTime?, status?}] or [pair, "remove"]: not
 * a Solana RPC method; only the local runtime answers it, for `spendgate chain price` and the
 * tests, so that test mode moves its prices through the chain, never around it.
 */
export async function setPythPrice(
  feeds: LocalPriceFeeds,
  params: readonly unknown[],
): Promise<null> {
  const pair = stringParam(params, 0, 'pair');
  const update = params[1];
  try {
    if (update === 'remove') {
      await feeds.remove(pair);
      return null;
    }
    if (typeof update !== 'object' || update === null)
      throw invalidParam('the update must be an object');
    const { price, confidence, publishTime, status } = update as Record<string, unknown>;
    if (typeof price !== 'string') throw invalidParam('price must be a string');
    await feeds.set(pair, {
      price,
      ...(typeof confidence === 'string' ? { confidence } : {}),
      ...(typeof publishTime === 'number' ? { publishTimeSec: publishTime } : {}),
      ...(status === 'trading' || status === 'halted' || status === 'unknown' ? { status } : {}),
    });
    return null;
  } catch (error) {
    if (error instanceof PriceUpdateError) throw invalidParam(error.message);
    throw error;
  }
}
