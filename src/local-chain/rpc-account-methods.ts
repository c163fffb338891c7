/**
 * The local endpoint's account methods: getAccountInfo, getMultipleAccounts, getBalance,
 * getTokenAccountBalance, getMinimumBalanceForRentExemption and requestAirdrop (a faucet, as
 * on a test cluster). Each is `(chain, params) => answer`, in the shapes @solana/web3.js 1.98
 * validates.
 */
import { AccountLayout, ACCOUNT_SIZE, MintLayout } from '@solana/spl-token';
import { exactNumber, type LocalChain } from './chain.js';
import { context, encodeAccount, formatUnits, isTokenProgram } from './rpc-encoding.js';
import { configParam, integerParam, invalidParam, pubkeyParam } from './rpc-protocol.js';

/** Accounts per getMultipleAccounts call, at most, as on public nodes. */
export const MULTIPLE_ACCOUNTS_MAX = 100;
/** The largest account a program may allocate (10 MiB). */
export const ACCOUNT_DATA_BYTES_MAX = 10 * 1024 * 1024;
/** A faucet grant, at most (1,000 SOL). */
export const AIRDROP_LAMPORTS_MAX = 1_000 * 1_000_000_000;

export async function getAccountInfo(chain: LocalChain, params: readonly unknown[]) {
  const address = pubkeyParam(params, 0);
  const config = configParam(params, 1);
  const slot = await chain.slot();
  const account = await chain.banks.getAccount(address);
  return {
    context: context(slot),
    value: account === null ? null : encodeAccount(account, config),
  };
}

export async function getMultipleAccounts(chain: LocalChain, params: readonly unknown[]) {
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
    const account = await chain.banks.getAccount(key);
    value.push(account === null ? null : encodeAccount(account, config));
  }
  return { context: context(slot), value };
}

export async function getBalance(chain: LocalChain, params: readonly unknown[]) {
  const address = pubkeyParam(params, 0);
  configParam(params, 1);
  const slot = await chain.slot();
  return {
    context: context(slot),
    value: exactNumber(await chain.banks.getBalance(address), 'lamports'),
  };
}

export async function getTokenAccountBalance(chain: LocalChain, params: readonly unknown[]) {
  const address = pubkeyParam(params, 0);
  configParam(params, 1);
  const slot = await chain.slot();
  const account = await chain.banks.getAccount(address);
  if (account === null || !isTokenProgram(account.owner) || account.data.length < ACCOUNT_SIZE) {
    throw invalidParam('could not find account');
  }
  const token = AccountLayout.decode(account.data);
  const mint = await chain.banks.getAccount(token.mint);
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
}

export async function getMinimumBalanceForRentExemption(
  chain: LocalChain,
  params: readonly unknown[],
): Promise<number> {
  const dataBytes = integerParam(params, 0, 'data length', ACCOUNT_DATA_BYTES_MAX);
  const rent = await chain.banks.getRent();
  return exactNumber(rent.minimumBalance(BigInt(dataBytes)), 'lamports');
}

export async function requestAirdrop(
  chain: LocalChain,
  params: readonly unknown[],
): Promise<string> {
  const to = pubkeyParam(params, 0);
  const lamports = integerParam(params, 1, 'lamports', AIRDROP_LAMPORTS_MAX);
  return chain.airdrop(to, lamports);
}
