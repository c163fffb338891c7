/**
 * The local endpoint's transaction methods: sendTransaction (with a node's preflight),
 * simulateTransaction, getSignatureStatuses and getFeeForMessage. Each is
 * `(chain, params) => answer`, in the shapes @solana/web3.js 1.98 validates.
 */
import { VersionedMessage } from '@solana/web3.js';
import bs58 from 'bs58';
import { verifySignatures, exactNumber, type LocalChain } from './chain.js';
import { context, decodeBytes, decodeTransaction } from './rpc-encoding.js';
import {
  configParam,
  invalidParam,
  RpcError,
  SEND_TRANSACTION_PREFLIGHT_FAILURE,
  stringParam,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
} from './rpc-protocol.js';

/** Signatures per getSignatureStatuses call, at most, as on public nodes. */
export const SIGNATURE_STATUSES_MAX = 256;

export async function sendTransaction(
  chain: LocalChain,
  params: readonly unknown[],
): Promise<string> {
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
}

export async function simulateTransaction(chain: LocalChain, params: readonly unknown[]) {
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
    const latest = await chain.banks.getLatestBlockhash();
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
}

export async function getSignatureStatuses(chain: LocalChain, params: readonly unknown[]) {
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
}

export async function getFeeForMessage(chain: LocalChain, params: readonly unknown[]) {
  const bytes = decodeBytes(stringParam(params, 0, 'message'), 'base64', 'message');
  configParam(params, 1);
  let message: VersionedMessage;
  try {
    message = VersionedMessage.deserialize(bytes);
  } catch {
    throw invalidParam('failed to deserialize message');
  }
  const slot = await chain.slot();
  const banks = chain.banks;
  // bankrun's wrapper only calls message.serialize(), which both message versions have.
  const fee = await banks.getFeeForMessage(message as Parameters<typeof banks.getFeeForMessage>[0]);
  return { context: context(slot), value: fee === null ? null : exactNumber(fee, 'lamports') };
}
