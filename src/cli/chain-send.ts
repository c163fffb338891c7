import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { ConfigError, type Settings } from '../config/env.js';
import { sendFromOutside, SOL_DECIMALS } from '../solana/deposits.js';
import { toUnits, USDC_DECIMALS } from '../solana/transfers.js';
import { UsageError } from './usage-error.js';

/*
 * `spendgate chain send --to ADDRESS --amount X --currency USDC|SOL [--rpc URL]`, test mode
 * only: sends from a new outside wallet to an address (a vault's depositAddress), as a user's
 * wallet would, on the test cluster (--rpc, else SOLANA_TEST_RPC_URL; `spendgate serve` logs
 * its local runtime's URL as `localSolanaRpc`). The wallet is funded by the cluster's faucets:
 * requestAirdrop for SOL (and the fee), and, for USDC, the local runtime's requestUsdcAirdrop.
 * It never uses a key of the service's, and never the live cluster.
 */

export const CHAIN_USAGE =
  'usage: spendgate chain send --to ADDRESS --amount X --currency USDC|SOL [--rpc URL]';

/** SOL for the outside wallet's fee and the associated account's rent, beyond the amount. */
const FEE_LAMPORTS = 10_000_000n;

interface SendArguments {
  readonly to: PublicKey;
  readonly amount: string;
  readonly currency: 'USDC' | 'SOL';
  readonly rpc: string | null;
}

function parseArguments(argv: readonly string[]): SendArguments {
  if (argv[0] !== 'send' || argv.length % 2 !== 1 || argv.length > 9)
    throw new UsageError(CHAIN_USAGE);
  const flags = new Map<string, string>();
  for (let index = 1; index < argv.length; index += 2) {
    const [flag, value] = [argv[index], argv[index + 1]];
    if (flag === undefined || value === undefined || flags.has(flag))
      throw new UsageError(CHAIN_USAGE);
    flags.set(flag, value);
  }
  const to = flags.get('--to');
  const amount = flags.get('--amount');
  const currency = flags.get('--currency');
  const unknown = [...flags.keys()].filter(
    (flag) => !['--to', '--amount', '--currency', '--rpc'].includes(flag),
  );
  if (to === undefined || amount === undefined || unknown.length > 0)
    throw new UsageError(CHAIN_USAGE);
  if (currency !== 'USDC' && currency !== 'SOL') throw new UsageError(CHAIN_USAGE);
  let address: PublicKey;
  try {
    address = new PublicKey(to);
  } catch {
    throw new UsageError(`--to is not a Solana address\n${CHAIN_USAGE}`);
  }
  return { to: address, amount, currency, rpc: flags.get('--rpc') ?? null };
}

async function rpcRequest(url: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error !== undefined) throw new ConfigError(`${method}: ${body.error.message}`);
  return body.result;
}

/** Runs the command; answers the lines to print. */
export async function runChainSend(settings: Settings, argv: readonly string[]): Promise<string[]> {
  const args = parseArguments(argv);
  if (settings.modes.includes('live')) {
    throw new ConfigError('chain send is for test mode only: set SPENDGATE_MODES=test');
  }
  const url = args.rpc ?? settings.solana.testRpcUrl;
  if (url === null) {
    throw new ConfigError(
      'chain send needs the test cluster: --rpc URL or SOLANA_TEST_RPC_URL (spendgate serve logs its local runtime as localSolanaRpc)',
    );
  }
  const decimals = args.currency === 'SOL' ? SOL_DECIMALS : USDC_DECIMALS;
  let units: bigint;
  try {
    units = toUnits(args.amount, decimals);
  } catch {
    throw new UsageError(
      `--amount must be a positive amount with at most ${decimals} decimals\n${CHAIN_USAGE}`,
    );
  }
  if (units <= 0n) throw new UsageError(`--amount must be positive\n${CHAIN_USAGE}`);
  const connection = new Connection(url, 'confirmed');
  const wallet = Keypair.generate();
  const lamports = FEE_LAMPORTS + (args.currency === 'SOL' ? units : 0n);
  const latest = await connection.getLatestBlockhash('confirmed');
  const airdrop = await connection.requestAirdrop(wallet.publicKey, Number(lamports));
  await connection.confirmTransaction({ signature: airdrop, ...latest }, 'confirmed');
  const mint = args.currency === 'USDC' ? new PublicKey(settings.solana.testUsdcMint) : null;
  if (mint !== null) {
    await rpcRequest(url, 'requestUsdcAirdrop', [wallet.publicKey.toBase58(), Number(units)]);
  }
  const signature = await sendFromOutside({
    connection,
    from: wallet,
    to: args.to,
    mint,
    decimals,
    amountUnits: units,
  });
  return [
    `sent ${args.amount} ${args.currency} to ${args.to.toBase58()} from ${wallet.publicKey.toBase58()}`,
    `signature ${signature}`,
  ];
}
