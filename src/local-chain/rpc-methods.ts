import type { LocalChain } from './chain.js';
import {
  getAccountInfo,
  getBalance,
  getMinimumBalanceForRentExemption,
  getMultipleAccounts,
  getTokenAccountBalance,
  requestAirdrop,
} from './rpc-account-methods.js';
import {
  getBlockHeight,
  getEpochInfo,
  getHealth,
  getLatestBlockhash,
  getSlot,
  getVersion,
} from './rpc-cluster-methods.js';
import { getSignaturesForAddress, getTransaction } from './rpc-history-methods.js';
import { setPythPrice, type LocalPriceFeeds } from './price-feeds.js';
import type { RpcHandler, RpcMethods } from './rpc-protocol.js';
import { requestUsdcAirdrop, type UsdcFaucet } from './usdc-faucet.js';
import {
  getFeeForMessage,
  getSignatureStatuses,
  sendTransaction,
  simulateTransaction,
} from './rpc-transaction-methods.js';

export interface RpcInfo {
  genesisHash: string;
  /** The USDC faucet (usdc-faucet.ts); absent: no requestUsdcAirdrop. */
  usdcFaucet?: UsdcFaucet;
  /** The price feeds (price-feeds.ts); absent: no setPythPrice. */
  priceFeeds?: LocalPriceFeeds;
}

/** A method answered from the chain alone. */
type ChainMethod = (chain: LocalChain, params: readonly unknown[]) => Promise<unknown>;

const CHAIN_METHODS: Readonly<Record<string, ChainMethod>> = {
  sendTransaction,
  simulateTransaction,
  getSignatureStatuses,
  getFeeForMessage,
  getSignaturesForAddress,
  getTransaction,
  getAccountInfo,
  getMultipleAccounts,
  getBalance,
  getTokenAccountBalance,
  getMinimumBalanceForRentExemption,
  requestAirdrop,
  getLatestBlockhash,
  getEpochInfo,
  getBlockHeight,
  getSlot,
  getHealth,
  getVersion,
};

/**
 * The Solana JSON-RPC methods the transfer worker uses, answered from the local runtime with
 * the shapes @solana/web3.js 1.98 validates (https://solana.com/docs/rpc). Context-wrapped
 * methods answer `{ context: { slot }, value }`. One small function per method, grouped by what
 * it reads: rpc-transaction-methods.ts, rpc-account-methods.ts, rpc-cluster-methods.ts,
 * rpc-history-methods.ts.
 *
 * getSignaturesForAddress and getTransaction read the chain's history (rpc-history-methods.ts).
 * Not a full node: no getProgramAccounts, getTokenAccountsByOwner, isBlockhashValid, jsonParsed account data (asked for jsonParsed,
 * accounts come back base64, which web3.js accepts).
 */
export function createRpcMethods(chain: LocalChain, info: RpcInfo): RpcMethods {
  const methods = new Map<string, RpcHandler>();
  for (const [name, method] of Object.entries(CHAIN_METHODS)) {
    methods.set(name, (params) => method(chain, params));
  }
  // Not from the chain: from what the runtime said at start.
  methods.set('getGenesisHash', () => Promise.resolve(info.genesisHash));
  const faucet = info.usdcFaucet;
  if (faucet !== undefined) {
    methods.set('requestUsdcAirdrop', (params) => requestUsdcAirdrop(chain, faucet, params));
  }
  const feeds = info.priceFeeds;
  if (feeds !== undefined) methods.set('setPythPrice', (params) => setPythPrice(feeds, params));
  return methods;
}
