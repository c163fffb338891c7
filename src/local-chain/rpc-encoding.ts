/**
 * How the local endpoint's RPC methods read and write values on the wire as a node does:
 * transaction and message bytes in (base58 or base64, bounded), accounts, token amounts and the
 * `context` of a context-wrapped answer out.
 */
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { type AccountInfo, type PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { invalidParam, stringParam } from './rpc-protocol.js';

/** The runtime's version as bankrun 0.4 embeds it (agave 1.18). */
export const SOLANA_CORE_VERSION = '1.18.0';
/** A transaction on the wire is at most 1232 bytes; base64 of that is under 2 KiB. */
export const ENCODED_TRANSACTION_CHARS_MAX = 4_096;

/** The `context` of a context-wrapped answer (`{ context: { slot }, value }`). */
export function context(slot: number) {
  return { slot, apiVersion: SOLANA_CORE_VERSION };
}

/**
 * Transaction or message bytes from their base58 or base64 text, as a node reads a parameter;
 * refuses (-32602) what is too long, undecodable or in another encoding.
 */
export function decodeBytes(text: string, encoding: unknown, what: string): Buffer {
  if (text.length > ENCODED_TRANSACTION_CHARS_MAX) throw invalidParam(`${what} is too large`);
  try {
    if (encoding === 'base58') return Buffer.from(bs58.decode(text));
    if (encoding === undefined || encoding === 'base64') return Buffer.from(text, 'base64');
  } catch {
    throw invalidParam(`${what} is not valid ${JSON.stringify(encoding)}`);
  }
  throw invalidParam(`unsupported encoding: ${JSON.stringify(encoding)}`);
}

export function decodeTransaction(params: readonly unknown[], config: Record<string, unknown>) {
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

/** An account as getAccountInfo answers it: data sliced and encoded as the config asks. */
export function encodeAccount(account: AccountInfo<Uint8Array>, config: Record<string, unknown>) {
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

export function isTokenProgram(owner: PublicKey): boolean {
  return owner.equals(TOKEN_PROGRAM_ID) || owner.equals(TOKEN_2022_PROGRAM_ID);
}
