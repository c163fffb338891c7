/**
 * The Solana JSON-RPC methods the transfer worker uses, answered from the local runtime with
 * the shapes @solana/web3.js 1.98 validates (https://solana.com/docs/rpc). Context-wrapped
 * methods answer `{ context: { slot }, value }`. One small handler per method.
 *
 * Not a full node: no getTransaction, getSignaturesForAddress, getProgramAccounts,
 * getTokenAccountsByOwner, isBlockhashValid, jsonParsed account data (asked for jsonParsed,
 * accounts come back base64, which web3.js accepts).
 */
import {
  AccountLayout,
  ACCOUNT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  type AccountInfo,
  type PublicKey,
  VersionedMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { exactNumber, verifySignatures, type LocalChain } from './chain.js';
import {
  configParam,
  integerParam,
  invalidParam,
  pubkeyParam,
  RpcError,
  SEND_TRANSACTION_PREFLIGHT_FAILURE,
  stringParam,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  type RpcHandler,
  type RpcMethods,
} from './rpc-protocol.js';

/** The runtime's version as bankrun 0.4 embeds it (agave 1.18). */
export const SOLANA_CORE_VERSION = '1.18.0';
/** Limits as on public nodes. */
export const SIGNATURE_STATUSES_MAX = 256;
export const MULTIPLE_ACCOUNTS_MAX = 100;
/** A transaction on the wire is at most 1232 bytes; base64 of that is under 2 KiB. */
export const ENCODED_TRANSACTION_CHARS_MAX = 4_096;
export const ACCOUNT_DATA_BYTES_MAX = 10 * 1024 * 1024;
/** A faucet grant, at most (1,000 SOL). */
export const AIRDROP_LAMPORTS_MAX = 1_000 * 1_000_000_000;

export interface RpcInfo {
  genesisHash: string;
}

function context(slot: number) {
  return { slot, apiVersion: SOLANA_CORE_VERSION };
}

function decodeBytes(text: string, encoding: unknown, what: string): Buffer {
  if (text.length > ENCODED_TRANSACTION_CHARS_MAX) throw invalidParam(`${what} is too large`);
  try {
    if (encoding === 'base58') return Buffer.from(bs58.decode(text));
    if (encoding === undefined || encoding === 'base64') return Buffer.from(text, 'base64');
  } catch {
    throw invalidParam(`${what} is not valid ${JSON.stringify(encoding)}`);
  }
  throw invalidParam(`unsupported encoding: ${JSON.stringify(encoding)}`);
}

function decodeTransaction(params: readonly unknown[], config: Record<string, unknown>) {
  // sendTransaction defaults to base58 on a node; web3.js always says base64.
  const bytes = decodeBytes(
    stringParam(params, 0, 'transaction'),
    config.encoding ?? 'base58',
    'transaction',
  );
  try {
    return VersionedTransaction.deserialize(bytes);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalidParam(`failed to deserialize transaction: ${reason}`);
  }
}

function encodeAccount(account: AccountInfo<Uint8Array>, config: Record<string, unknown>) {
  let data = Buffer.from(account.data);
  const slice = config.dataSlice;
  if (typeof slice === 'object' && slice !== null) {
    const { offset, length } = slice as { offset?: unknown; length?: unknown };
    if (typeof offset !== 'number' || typeof length !== 'number' || offset < 0 || length < 0) {
      throw invalidParam('dataSlice needs a non-negative offset and length');
    }
    data = data.subarray(offset, offset + length);
  }
  const encoding = config.encoding ?? 'base64';
  let encoded: [string, string];
  if (encoding === 'base58') encoded = [bs58.encode(data), 'base58'];
  else if (encoding === 'base64' || encoding === 'jsonParsed')
    encoded = [data.toString('base64'), 'base64'];
  else throw invalidParam(`unsupported encoding: ${JSON.stringify(encoding)}`);
  return {
    data: encoded,
    executable: account.executable,
    lamports: account.lamports,
    owner: account.owner.toBase58(),
    rentEpoch: account.rentEpoch ?? 0,
    space: account.data.length,
  };
}

/** Token units to the decimal string a node answers ("12.345678", "1", "0.5"). */
export function formatUnits(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = (units / scale).toString();
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

function isTokenProgram(owner: PublicKey): boolean {
  return owner.equals(TOKEN_PROGRAM_ID) || owner.equals(TOKEN_2022_PROGRAM_ID);
}

/** The epoch and slot index of `slot` under an epoch schedule with or without warmup. */
export function epochOfSlot(
  slot: bigint,
  schedule: {
    slotsPerEpoch: bigint;
    warmup: boolean;
    firstNormalEpoch: bigint;
    firstNormalSlot: bigint;
  },
): { epoch: bigint; slotIndex: bigint; slotsInEpoch: bigint } {
  const minimumSlotsPerEpoch = 32n;
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    let power = 1n;
    while (power < slot + minimumSlotsPerEpoch + 1n) power *= 2n;
    const epoch = BigInt(power.toString(2).length - 1) - 5n - 1n;
    const slotsInEpoch = 2n ** (epoch + 5n);
    return { epoch, slotIndex: slot - (slotsInEpoch - minimumSlotsPerEpoch), slotsInEpoch };
  }
  const normal = slot - schedule.firstNormalSlot;
  return {
    epoch: schedule.firstNormalEpoch + normal / schedule.slotsPerEpoch,
    slotIndex: normal % schedule.slotsPerEpoch,
    slotsInEpoch: schedule.slotsPerEpoch,
  };
}

export function createRpcMethods(chain: LocalChain, info: RpcInfo): RpcMethods {
  const banks = chain.banks;

  const sendTransaction: RpcHandler = async (params) => {
    const config = configParam(params, 1);
    const tx = decodeTransaction(params, config);
    if (config.skipPreflight !== true) {
      if (!verifySignatures(tx)) {
        throw new RpcError(
          TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
          'Transaction signature verification failure',
        );
      }
      const simulated = await chain.simulateUnlessKnown(tx);
      if (simulated !== null && simulated.err !== null) {
        throw new RpcError(
          SEND_TRANSACTION_PREFLIGHT_FAILURE,
          `Transaction simulation failed: ${simulated.message}`,
          {
            accounts: null,
            err: simulated.err,
            innerInstructions: null,
            logs: simulated.logs,
            returnData: null,
            unitsConsumed: simulated.unitsConsumed,
          },
        );
      }
    }
    // Dropped transactions (bad signature, unknown blockhash, fee payer cannot pay) still get
    // their signature back, as from a node's forwarding path: they just never land.
    const outcome = await chain.send(tx);
    return outcome.signature;
  };

  const simulateTransaction: RpcHandler = async (params) => {
    const config = configParam(params, 1);
    const tx = decodeTransaction(params, { encoding: 'base58', ...config });
    if (config.sigVerify === true && config.replaceRecentBlockhash === true) {
      throw invalidParam('sigVerify may not be used with replaceRecentBlockhash');
    }
    if (config.sigVerify === true && !verifySignatures(tx)) {
      throw new RpcError(
        TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
        'Transaction signature verification failure',
      );
    }
    if (config.replaceRecentBlockhash === true) {
      const latest = await banks.getLatestBlockhash();
      if (latest === null) throw new RpcError(-32603, 'no blockhash');
      tx.message.recentBlockhash = latest[0];
    }
    const slot = await chain.slot();
    const outcome = await chain.simulate(tx);
    return {
      context: context(slot),
      value: {
        err: outcome.err,
        logs: outcome.logs,
        accounts: null,
        unitsConsumed: outcome.unitsConsumed,
        returnData:
          outcome.returnData === null
            ? null
            : {
                programId: outcome.returnData.programId,
                data: [outcome.returnData.dataBase64, 'base64'],
              },
        innerInstructions: null,
      },
    };
  };

  const getSignatureStatuses: RpcHandler = async (params) => {
    const signatures = params[0];
    if (!Array.isArray(signatures) || signatures.some((s) => typeof s !== 'string')) {
      throw invalidParam('signatures must be an array of strings');
    }
    if (signatures.length > SIGNATURE_STATUSES_MAX) {
      throw invalidParam(`Too many inputs provided; max ${SIGNATURE_STATUSES_MAX}`);
    }
    configParam(params, 1);
    const slot = await chain.slot();
    const value = [];
    for (const signature of signatures as string[]) {
      let bytes: Uint8Array;
      try {
        bytes = bs58.decode(signature);
      } catch {
        throw invalidParam('Invalid signature');
      }
      if (bytes.length !== 64) throw invalidParam('Invalid signature');
      const status = await chain.status(signature);
      value.push(
        status === null
          ? null
          : {
              slot: status.slot,
              // Everything bankrun has processed is rooted: finalized at once.
              confirmations: null,
              err: status.err,
              status: status.err === null ? { Ok: null } : { Err: status.err },
              confirmationStatus: 'finalized',
            },
      );
    }
    return { context: context(slot), value };
  };

  const getLatestBlockhash: RpcHandler = async (params) => {
    configParam(params, 0);
    const slot = await chain.slot();
    const latest = await banks.getLatestBlockhash();
    if (latest === null) throw new RpcError(-32603, 'no blockhash');
    const [blockhash, lastValidBlockHeight] = latest;
    return {
      context: context(slot),
      value: { blockhash, lastValidBlockHeight: exactNumber(lastValidBlockHeight, 'block height') },
    };
  };

  const getAccountInfo: RpcHandler = async (params) => {
    const address = pubkeyParam(params, 0);
    const config = configParam(params, 1);
    const slot = await chain.slot();
    const account = await banks.getAccount(address);
    return {
      context: context(slot),
      value: account === null ? null : encodeAccount(account, config),
    };
  };

  const getMultipleAccounts: RpcHandler = async (params) => {
    const addresses = params[0];
    if (!Array.isArray(addresses)) throw invalidParam('addresses must be an array');
    if (addresses.length > MULTIPLE_ACCOUNTS_MAX) {
      throw invalidParam(`Too many inputs provided; max ${MULTIPLE_ACCOUNTS_MAX}`);
    }
    const keys = addresses.map((_, index) => pubkeyParam(addresses, index));
    const config = configParam(params, 1);
    const slot = await chain.slot();
    const value = [];
    for (const key of keys) {
      const account = await banks.getAccount(key);
      value.push(account === null ? null : encodeAccount(account, config));
    }
    return { context: context(slot), value };
  };

  const getBalance: RpcHandler = async (params) => {
    const address = pubkeyParam(params, 0);
    configParam(params, 1);
    const slot = await chain.slot();
    return {
      context: context(slot),
      value: exactNumber(await banks.getBalance(address), 'lamports'),
    };
  };

  const getTokenAccountBalance: RpcHandler = async (params) => {
    const address = pubkeyParam(params, 0);
    configParam(params, 1);
    const slot = await chain.slot();
    const account = await banks.getAccount(address);
    if (account === null || !isTokenProgram(account.owner) || account.data.length < ACCOUNT_SIZE) {
      throw invalidParam('could not find account');
    }
    const token = AccountLayout.decode(account.data);
    const mint = await banks.getAccount(token.mint);
    if (mint === null || !isTokenProgram(mint.owner)) throw invalidParam('could not find mint');
    const { decimals } = MintLayout.decode(mint.data);
    const uiAmountString = formatUnits(token.amount, decimals);
    return {
      context: context(slot),
      value: {
        amount: token.amount.toString(),
        decimals,
        uiAmount: Number(uiAmountString),
        uiAmountString,
      },
    };
  };

  const getMinimumBalanceForRentExemption: RpcHandler = async (params) => {
    const dataBytes = integerParam(params, 0, 'data length', ACCOUNT_DATA_BYTES_MAX);
    const rent = await banks.getRent();
    return exactNumber(rent.minimumBalance(BigInt(dataBytes)), 'lamports');
  };

  const getFeeForMessage: RpcHandler = async (params) => {
    const bytes = decodeBytes(stringParam(params, 0, 'message'), 'base64', 'message');
    configParam(params, 1);
    let message: VersionedMessage;
    try {
      message = VersionedMessage.deserialize(bytes);
    } catch {
      throw invalidParam('failed to deserialize message');
    }
    const slot = await chain.slot();
    // bankrun's wrapper only calls message.serialize(), which both message versions have.
    const fee = await banks.getFeeForMessage(
      message as Parameters<typeof banks.getFeeForMessage>[0],
    );
    return { context: context(slot), value: fee === null ? null : exactNumber(fee, 'lamports') };
  };

  const requestAirdrop: RpcHandler = async (params) => {
    const to = pubkeyParam(params, 0);
    const lamports = integerParam(params, 1, 'lamports', AIRDROP_LAMPORTS_MAX);
    return chain.airdrop(to, lamports);
  };

  const getEpochInfo: RpcHandler = async () => {
    const slot = await banks.getSlot();
    const blockHeight = await chain.blockHeight();
    const { epoch, slotIndex, slotsInEpoch } = epochOfSlot(
      slot,
      chain.context.genesisConfig.epochSchedule,
    );
    return {
      absoluteSlot: exactNumber(slot, 'slot'),
      blockHeight,
      epoch: exactNumber(epoch, 'epoch'),
      slotIndex: exactNumber(slotIndex, 'slot'),
      slotsInEpoch: exactNumber(slotsInEpoch, 'slots'),
      transactionCount: chain.transactionCount,
    };
  };

  const table: Record<string, RpcHandler> = {
    sendTransaction,
    simulateTransaction,
    getSignatureStatuses,
    getLatestBlockhash,
    getAccountInfo,
    getMultipleAccounts,
    getBalance,
    getTokenAccountBalance,
    getMinimumBalanceForRentExemption,
    getFeeForMessage,
    requestAirdrop,
    getEpochInfo,
    getBlockHeight: async () => chain.blockHeight(),
    getSlot: async () => chain.slot(),
    getGenesisHash: () => Promise.resolve(info.genesisHash),
    getHealth: () => Promise.resolve('ok'),
    getVersion: () => Promise.resolve({ 'solana-core': SOLANA_CORE_VERSION }),
  };
  return new Map(Object.entries(table));
}
