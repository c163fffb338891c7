/**
 * The local endpoint's cluster methods: getLatestBlockhash, getEpochInfo, getBlockHeight,
 * getSlot, getHealth and getVersion (getGenesisHash answers from the start-up information, in
 * rpc-methods.ts). Each is `(chain, params) => answer`, in the shapes @solana/web3.js 1.98
 * validates.
 */
import { exactNumber, type LocalChain } from './chain.js';
import { context, SOLANA_CORE_VERSION } from './rpc-encoding.js';
import { configParam, RpcError } from './rpc-protocol.js';

/** The shortest epoch of a warmup schedule (Solana's MINIMUM_SLOTS_PER_EPOCH). */
const SLOTS_PER_EPOCH_MIN = 32n;

export async function getLatestBlockhash(chain: LocalChain, params: readonly unknown[]) {
  configParam(params, 0);
  const slot = await chain.slot();
  const latest = await chain.banks.getLatestBlockhash();
  if (latest === null) throw new RpcError(-32603, 'no blockhash');
  const [blockhash, lastValidBlockHeight] = latest;
  return {
    context: context(slot),
    value: { blockhash, lastValidBlockHeight: exactNumber(lastValidBlockHeight, 'block height') },
  };
}

export async function getEpochInfo(chain: LocalChain) {
  const slot = await chain.banks.getSlot();
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
  if (schedule.warmup && slot < schedule.firstNormalSlot) {
    let power = 1n;
    while (power < slot + SLOTS_PER_EPOCH_MIN + 1n) power *= 2n;
    const epoch = BigInt(power.toString(2).length - 1) - 5n - 1n;
    const slotsInEpoch = 2n ** (epoch + 5n);
    return { epoch, slotIndex: slot - (slotsInEpoch - SLOTS_PER_EPOCH_MIN), slotsInEpoch };
  }
  const normal = slot - schedule.firstNormalSlot;
  return {
    epoch: schedule.firstNormalEpoch + normal / schedule.slotsPerEpoch,
    slotIndex: normal % schedule.slotsPerEpoch,
    slotsInEpoch: schedule.slotsPerEpoch,
  };
}

export function getBlockHeight(chain: LocalChain): Promise<number> {
  return chain.blockHeight();
}

export function getSlot(chain: LocalChain): Promise<number> {
  return chain.slot();
}

export function getHealth(): Promise<string> {
  return Promise.resolve('ok');
}

export function getVersion(): Promise<{ 'solana-core': string }> {
  return Promise.resolve({ 'solana-core': SOLANA_CORE_VERSION });
}
