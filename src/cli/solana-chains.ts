import { Connection, PublicKey } from '@solana/web3.js';
import type { Config } from '../config/env.js';
import type { Mode } from '../core/index.js';
import { startLocalSolana } from '../local-chain/index.js';
import { keypairSigner, loadTreasurySigner } from '../solana/signer.js';
import type { ChainTarget } from '../workers/solana-transfers.js';

/**
 * The chains the Solana transfer worker sends to (contract section 12):
 * - live: SOLANA_RPC_URL with SOLANA_TREASURY_KEY; without both, live transfers wait (and the
 *   API refuses new ones while SOLANA_RPC_URL is unset);
 * - test: SOLANA_TEST_RPC_URL with SOLANA_TREASURY_KEY, or by default a local Solana runtime
 *   in-process (solana-bankrun behind a loopback JSON-RPC endpoint) whose own treasury is
 *   funded at start, so that the sandbox works with no network at all.
 */
export interface Chains {
  readonly targets: Readonly<Record<Mode, ChainTarget | null>>;
  /** The local runtime's endpoint, when one was started. */
  readonly localRpcUrl: string | null;
  close(): Promise<void>;
}

export async function openChains(
  config: Pick<Config, 'modes' | 'solanaRpcUrl' | 'solana'>,
  log: { warn(message: string): void },
): Promise<Chains> {
  const { solana } = config;
  const signer = solana.treasuryKey === null ? null : loadTreasurySigner(solana.treasuryKey);
  let live: ChainTarget | null = null;
  if (config.modes.includes('live') && config.solanaRpcUrl !== null) {
    if (signer === null)
      log.warn('SOLANA_RPC_URL is set without SOLANA_TREASURY_KEY: live transfers wait');
    else
      live = {
        connection: new Connection(config.solanaRpcUrl, 'confirmed'),
        signer,
        usdcMint: new PublicKey(solana.usdcMint),
      };
  }
  if (!config.modes.includes('test')) {
    return { targets: { live, test: null }, localRpcUrl: null, close: () => Promise.resolve() };
  }
  if (solana.testRpcUrl !== null) {
    if (signer === null)
      log.warn('SOLANA_TEST_RPC_URL is set without SOLANA_TREASURY_KEY: test transfers wait');
    const test =
      signer === null
        ? null
        : {
            connection: new Connection(solana.testRpcUrl, 'confirmed'),
            signer,
            usdcMint: new PublicKey(solana.testUsdcMint),
          };
    return { targets: { live, test }, localRpcUrl: null, close: () => Promise.resolve() };
  }
  const local = await startLocalSolana();
  return {
    targets: {
      live,
      test: {
        connection: local.connection(),
        signer: keypairSigner(local.treasury),
        usdcMint: local.usdcMint,
      },
    },
    localRpcUrl: local.url,
    close: () => local.close(),
  };
}
