import { AccountType, parseBaseData, parsePriceData, PriceStatus } from '@pythnetwork/client';
import { PublicKey, type Connection } from '@solana/web3.js';

/*
 * Reading Pyth price accounts (contract v1.2, section 16; docs/pricing.md), in the background:
 * each feed is polled on its own timer, one read in flight per feed, each read bounded by a
 * timeout, and what it found handed to `onRead`. Nothing here is on an authorization's path:
 * the caller keeps the last reading in memory and the decision reads that.
 *
 * The classic price account (`pc_price_t`), parsed by Pyth's own `@pythnetwork/client`
 * (`parsePriceData`): the account is read with the slot it was read at, and the parser turns a
 * Trading aggregate published more than 25 slots before that into Unknown, Pyth's own rule.
 */

/** What one read of a feed found: the aggregate exactly, as integers and an exponent. */
export interface RawPriceReading {
  readonly pair: string;
  readonly address: string;
  /** The price is `priceUnits` times 10^exponent. */
  readonly priceUnits: bigint;
  readonly confidenceUnits: bigint;
  readonly exponent: number;
  /** The account's `timestamp`: the aggregate's publish time, unix seconds. */
  readonly publishTimeSec: bigint;
  /** The aggregate is Trading (and not older than 25 slots at the read). */
  readonly trading: boolean;
}

/** Why a read found no reading: the account says so, or the cluster did not answer. */
export type PriceReadFailure =
  'missing' | 'wrong_owner' | 'not_a_price_account' | 'rpc_error' | 'timeout';

export type PriceRead =
  | { readonly kind: 'reading'; readonly reading: RawPriceReading }
  | { readonly kind: 'failure'; readonly pair: string; readonly failure: PriceReadFailure };

export interface FeedReaderOptions {
  readonly connection: Connection;
  /** Pair (`SOL/USD`) to price account address. */
  readonly feeds: Readonly<Record<string, string>>;
  /** The program the accounts must be owned by: anything else is not Pyth's price. */
  readonly oracleProgram: string;
  readonly pollMs: number;
  readonly timeoutMs: number;
  readonly onRead: (read: PriceRead) => void;
}

export interface FeedReaders {
  /** Reads every feed once, now (each read still one in flight, bounded). */
  readAll(): Promise<void>;
  stop(): void;
}

/** Parses a price account's data, or says why it is not one. Pure: the tests call it too. */
export function parsePriceAccount(
  pair: string,
  address: string,
  data: Buffer,
  slot: number,
): PriceRead {
  const base = parseBaseData(data);
  // The parser reads fixed offsets up to 240 bytes: shorter data is no price account.
  if (base?.type !== AccountType.Price || data.length < 240) {
    return { kind: 'failure', pair, failure: 'not_a_price_account' };
  }
  const parsed = parsePriceData(data, slot);
  return {
    kind: 'reading',
    reading: {
      pair,
      address,
      priceUnits: parsed.aggregate.priceComponent,
      confidenceUnits: parsed.aggregate.confidenceComponent,
      exponent: parsed.exponent,
      publishTimeSec: parsed.timestamp,
      trading: parsed.status === PriceStatus.Trading,
    },
  };
}

async function readFeed(
  options: FeedReaderOptions,
  pair: string,
  address: PublicKey,
): Promise<PriceRead> {
  const { context, value } = await options.connection.getAccountInfoAndContext(address);
  if (value === null) return { kind: 'failure', pair, failure: 'missing' };
  if (value.owner.toBase58() !== options.oracleProgram) {
    return { kind: 'failure', pair, failure: 'wrong_owner' };
  }
  return parsePriceAccount(pair, address.toBase58(), value.data, context.slot);
}

/** One read, failing as `timeout` past `timeoutMs` (the read itself is then left to end). */
function boundedRead(
  options: FeedReaderOptions,
  pair: string,
  address: PublicKey,
): Promise<PriceRead> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<PriceRead>((resolve) => {
    timer = setTimeout(() => {
      resolve({ kind: 'failure', pair, failure: 'timeout' });
    }, options.timeoutMs);
  });
  const read = readFeed(options, pair, address).catch((): PriceRead => ({
    kind: 'failure',
    pair,
    failure: 'rpc_error',
  }));
  return Promise.race([read, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/** What reading one feed once needs: the cluster, the owner to insist on, the bound. */
export type OneFeedRead = Pick<FeedReaderOptions, 'connection' | 'oracleProgram' | 'timeoutMs'>;

/**
 * One feed, read once now (the reconciliation of reserves values the treasury with it, every
 * minute; never an authorization), bounded by `timeoutMs`.
 */
export function readPriceFeed(
  options: OneFeedRead,
  pair: string,
  address: string,
): Promise<PriceRead> {
  const reader: FeedReaderOptions = {
    ...options,
    feeds: {},
    pollMs: 0,
    onRead: () => undefined,
  };
  return boundedRead(reader, pair, new PublicKey(address));
}

export function startFeedReaders(options: FeedReaderOptions): FeedReaders {
  const inFlight = new Map<string, Promise<void>>();
  const feeds = Object.entries(options.feeds).map(([pair, address]) => ({
    pair,
    address: new PublicKey(address),
  }));
  const readOne = (pair: string, address: PublicKey): Promise<void> => {
    // One read in flight per feed: a slow cluster never piles reads up.
    const running = inFlight.get(pair);
    if (running !== undefined) return running;
    const read = boundedRead(options, pair, address)
      .then(options.onRead)
      .finally(() => inFlight.delete(pair));
    inFlight.set(pair, read);
    return read;
  };
  const readAll = async (): Promise<void> => {
    await Promise.all(feeds.map(({ pair, address }) => readOne(pair, address)));
  };
  const timer = setInterval(() => {
    void readAll();
  }, options.pollMs);
  timer.unref();
  void readAll();
  return {
    readAll,
    stop: () => {
      clearInterval(timer);
    },
  };
}
