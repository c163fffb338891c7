/**
 * The local endpoint's history methods: getSignaturesForAddress and getTransaction, read from
 * the chain's record of landed transactions (history.ts), in the shapes @solana/web3.js 1.98
 * validates. Everything bankrun has processed is rooted, so every commitment (including
 * `finalized`) sees every landed transaction. getTransaction answers `json` (the default) and
 * `base64`; it reports no inner instructions, token balances or loaded addresses (the local
 * chain runs no program that makes cross-program transfers the service would care about, and
 * keeps no token balances per transaction).
 */
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { LocalChain } from './chain.js';
import type { LandedTransaction } from './history.js';
import { configParam, invalidParam, pubkeyParam, stringParam } from './rpc-protocol.js';

/** Signatures per getSignaturesForAddress call, at most, as on public nodes. */
export const SIGNATURES_FOR_ADDRESS_MAX = 1_000;

function signatureParam(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length > 88) throw invalidParam(`${what}: Invalid`);
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    throw invalidParam(`${what}: Invalid`);
  }
  if (bytes.length !== 64) throw invalidParam(`${what}: Invalid`);
  return value;
}

function limitOf(config: Record<string, unknown>): number {
  const limit = config.limit ?? SIGNATURES_FOR_ADDRESS_MAX;
  if (
    typeof limit !== 'number' ||
    !Number.isSafeInteger(limit) ||
    limit < 1 ||
    limit > SIGNATURES_FOR_ADDRESS_MAX
  ) {
    throw invalidParam(`limit must be an integer in [1, ${SIGNATURES_FOR_ADDRESS_MAX}]`);
  }
  return limit;
}

export function getSignaturesForAddress(chain: LocalChain, params: readonly unknown[]) {
  const address = pubkeyParam(params, 0).toBase58();
  const config = configParam(params, 1);
  const found = chain.history.signaturesFor(address, {
    limit: limitOf(config),
    ...(config.before === undefined ? {} : { before: signatureParam(config.before, 'before') }),
    ...(config.until === undefined ? {} : { until: signatureParam(config.until, 'until') }),
  });
  return Promise.resolve(
    found.map((landed) => ({
      signature: landed.signature,
      slot: landed.slot,
      err: landed.err,
      memo: null,
      blockTime: landed.blockTime,
      confirmationStatus: 'finalized',
    })),
  );
}

/** The transaction as a node's `json` encoding shows it (raw instructions, base58 data). */
function jsonTransaction(landed: LandedTransaction) {
  const tx = VersionedTransaction.deserialize(landed.bytes);
  const message = tx.message;
  return {
    signatures: tx.signatures.map((signature) => bs58.encode(signature)),
    message: {
      accountKeys: [...landed.accountKeys],
      header: message.header,
      recentBlockhash: message.recentBlockhash,
      instructions: message.compiledInstructions.map((instruction) => ({
        programIdIndex: instruction.programIdIndex,
        accounts: [...instruction.accountKeyIndexes],
        data: bs58.encode(instruction.data),
        stackHeight: null,
      })),
      ...(message.version === 0
        ? {
            addressTableLookups: message.addressTableLookups.map((lookup) => ({
              accountKey: lookup.accountKey.toBase58(),
              writableIndexes: [...lookup.writableIndexes],
              readonlyIndexes: [...lookup.readonlyIndexes],
            })),
          }
        : {}),
    },
  };
}

export function getTransaction(chain: LocalChain, params: readonly unknown[]) {
  const signature = signatureParam(stringParam(params, 0, 'signature'), 'signature');
  const config = configParam(params, 1);
  const encoding = config.encoding ?? 'json';
  if (encoding !== 'json' && encoding !== 'base64') {
    throw invalidParam(`unsupported encoding: ${JSON.stringify(encoding)}`);
  }
  const landed = chain.history.get(signature);
  if (landed === null) return Promise.resolve(null);
  const version = VersionedTransaction.deserialize(landed.bytes).version;
  // A node refuses a versioned transaction unless the client says it can read one.
  if (version === 0 && config.maxSupportedTransactionVersion === undefined) {
    throw invalidParam(
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  return Promise.resolve({
    slot: landed.slot,
    blockTime: landed.blockTime,
    ...(config.maxSupportedTransactionVersion === undefined ? {} : { version }),
    transaction:
      encoding === 'base64' ? [landed.bytes.toString('base64'), 'base64'] : jsonTransaction(landed),
    meta: {
      err: landed.err,
      status: landed.err === null ? { Ok: null } : { Err: landed.err },
      fee: landed.fee,
      preBalances: [...landed.preBalances],
      postBalances: [...landed.postBalances],
      innerInstructions: [],
      logMessages: [...landed.logMessages],
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: 0,
    },
  });
}
