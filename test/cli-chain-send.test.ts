import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../src/local-chain/index.js';
import { startCliProcess, stopAll } from './support/processes.js';

/**
 * `spendgate chain send` as a user runs it, against the local runtime over loopback: a new
 * outside wallet, funded by the cluster's faucets, sends USDC or SOL to an address; refused
 * outside test mode and without a test cluster.
 */
describe('spendgate chain send', () => {
  let chain: LocalSolana;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
  });

  afterAll(async () => {
    await stopAll();
    await chain.close();
  });

  const run = async (args: string[], env: Record<string, string> = {}) => {
    const child = startCliProcess(['chain', 'send', ...args], {
      SPENDGATE_MODES: 'test',
      SOLANA_TEST_RPC_URL: chain.url,
      SOLANA_TEST_USDC_MINT: chain.usdcMint.toBase58(),
      ...env,
    });
    const { code } = await child.exited;
    return { code, output: child.output() };
  };

  it('sends USDC and SOL from an outside wallet to an address', async () => {
    const to = Keypair.generate().publicKey;
    const usdc = await run(['--to', to.toBase58(), '--amount', '12.5', '--currency', 'USDC']);
    expect(usdc.code, usdc.output).toBe(0);
    expect(usdc.output).toMatch(/sent 12\.5 USDC to \w+ from \w+\nsignature \w+/);
    const connection = chain.connection();
    const ata = getAssociatedTokenAddressSync(chain.usdcMint, to);
    expect((await connection.getTokenAccountBalance(ata)).value.amount).toBe('12500000');
    const sol = await run(['--to', to.toBase58(), '--amount', '0.25', '--currency', 'SOL']);
    expect(sol.code, sol.output).toBe(0);
    expect(await connection.getBalance(to)).toBe(250_000_000);
  }, 120_000);

  it('refuses outside test mode, without a cluster, and malformed arguments', async () => {
    const to = Keypair.generate().publicKey.toBase58();
    const live = await run(['--to', to, '--amount', '1', '--currency', 'SOL'], {
      SPENDGATE_MODES: 'test,live',
    });
    expect([live.code, live.output]).toEqual([1, expect.stringContaining('test mode only')]);
    const none = await run(['--to', to, '--amount', '1', '--currency', 'SOL'], {
      SOLANA_TEST_RPC_URL: '',
    });
    expect([none.code, none.output]).toEqual([1, expect.stringContaining('SOLANA_TEST_RPC_URL')]);
    const bad = await run(['--to', 'nope', '--amount', '1', '--currency', 'SOL']);
    expect([bad.code, bad.output]).toEqual([2, expect.stringContaining('not a Solana address')]);
    const euro = await run(['--to', to, '--amount', '1', '--currency', 'EUR']);
    expect(euro.code).toBe(2);
  }, 120_000);
});
