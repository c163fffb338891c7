import { randomBytes } from 'node:crypto';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey, type Connection } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { Decimal, type Scope, type VaultRecord } from '../../src/core/index.js';
import { newId } from '../../src/ids.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { buildSignedSweep } from '../../src/solana/deposits.js';
import { keypairSigner } from '../../src/solana/signer.js';
import { recipientBalance, toUnits } from '../../src/solana/transfers.js';
import { checkInvariants } from '../../src/store/invariants.js';
import { createPgClient } from '../../src/store/sql/pg-client.js';
import { openStore, type OpenedStore as Store } from '../../src/store/store.js';
import { DepositSweeper } from '../../src/workers/deposit-sweeper.js';
import { DepositWatcher, type DepositWatchOptions } from '../../src/workers/deposit-watcher.js';
import type { ChainTarget } from '../../src/workers/solana-transfers.js';
import { foreignMint, outsideWallet, sendDeposit } from '../support/deposits.js';
import { serverDatabase } from '../support/processes.js';

/**
 * The deposit watcher and the sweeper against real sends on the local chain (solana-bankrun
 * behind loopback JSON-RPC) and a real PostgreSQL database: deposits of USDC and SOL credited
 * once whatever runs again or at once, foreign mints and dust ignored, sweeps into the
 * treasury. The ledger's invariants (every credited deposit is one completed deposit of its
 * amount) are checked after every test.
 */
const silent = { warn: () => undefined, info: () => undefined };
const WATCH: DepositWatchOptions = { addressesMax: 50, signaturesMax: 100, backfillMax: 10 };

interface DepositRow {
  status: string;
  amount: string;
  signature: string;
  sender: string;
  slot: string;
  mint: string | null;
  ignored_reason: string | null;
  transaction_id: string | null;
}

describe('deposits on chain', () => {
  const masterKey = randomBytes(32);
  let chain: LocalSolana;
  let connection: Connection;
  let database: Awaited<ReturnType<typeof serverDatabase>>;
  let store: Store;
  let second: Store;
  let target: ChainTarget;
  let owner: Scope;
  let wallet: Keypair;

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0 });
    connection = chain.connection();
    database = await serverDatabase();
    const open = () =>
      openStore({
        client: createPgClient({ connectionString: database.url, connectionsMax: 5 }),
        masterKey,
      });
    store = await open();
    second = await open();
    target = {
      connection,
      signer: keypairSigner(chain.treasury),
      usdcMint: chain.usdcMint,
    };
    const account = await store.findOrCreateAccount(`deposits-${randomBytes(4).toString('hex')}`);
    owner = { accountId: account.id, mode: 'test' };
    wallet = await outsideWallet(chain, { sol: '50', usdc: '1000' });
  });

  afterAll(async () => {
    await store.close();
    await second.close();
    await database.drop();
    await chain.close();
  });

  const chains = () => ({ test: target, live: null });
  const watcher = (on: Store = store, options = WATCH) =>
    new DepositWatcher(on, chains(), silent, options);

  async function vault(currency: 'USDC' | 'SOL'): Promise<VaultRecord> {
    const created = await store.createVault(owner, {
      name: 'Deposits',
      currency,
      metadata: {},
      initialDeposit: new Decimal(0),
    });
    return created.vault;
  }

  const address = (v: VaultRecord) => new PublicKey(v.depositAddress ?? '');

  async function deposits(vaultId: string): Promise<DepositRow[]> {
    const { rows } = await store.client.query<DepositRow>(
      `SELECT status, amount::text AS amount, signature, sender, slot::text AS slot, mint,
              ignored_reason, transaction_id
       FROM chain_deposits WHERE vault_id = $1 ORDER BY id`,
      [vaultId],
    );
    return rows;
  }

  async function ledger(vaultId: string): Promise<string> {
    return (await store.getVault(owner, vaultId)).ledger.toFixed();
  }

  async function expectInvariants(): Promise<void> {
    expect(await checkInvariants(store.client)).toEqual([]);
  }

  it('gives every vault an address derived from the deposit seed, which the service signs for', async () => {
    const v = await vault('USDC');
    expect(v.depositAddress).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const seed = await store.depositKeySeed(v.id);
    expect(Keypair.fromSeed(seed).publicKey.toBase58()).toBe(v.depositAddress);
    // The same seed from another process: the same address.
    expect(Keypair.fromSeed(await second.depositKeySeed(v.id)).publicKey.toBase58()).toBe(
      v.depositAddress,
    );
    const other = await vault('USDC');
    expect(other.depositAddress).not.toBe(v.depositAddress);
    // Only ciphertext at rest.
    const { rows } = await store.client.query<{ seed_enc: string }>(
      'SELECT seed_enc FROM deposit_seed',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.seed_enc).not.toContain(seed.toString('hex'));
  });

  it('credits a USDC deposit once, with its signature, sender and slot', async () => {
    const v = await vault('USDC');
    const signature = await sendDeposit(chain, wallet, address(v), '25.5', 'USDC');
    await watcher().scanOnce();
    expect(await ledger(v.id)).toBe('25.5');
    const [row, ...more] = await deposits(v.id);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      status: 'credited',
      amount: '25.5',
      signature,
      sender: wallet.publicKey.toBase58(),
      mint: chain.usdcMint.toBase58(),
      ignored_reason: null,
    });
    const landed = await connection.getSignatureStatus(signature, {
      searchTransactionHistory: true,
    });
    expect(Number(row?.slot)).toBe(landed.value?.slot);
    const transaction = await store.getTransaction(owner, row?.transaction_id ?? '');
    expect(transaction).toMatchObject({ type: 'deposit', status: 'completed' });
    expect(transaction.amount.toFixed()).toBe('25.5');
    expect(transaction.onChain).toEqual({
      signature,
      sender: wallet.publicKey.toBase58(),
      slot: Number(row?.slot),
    });
    const { rows: events } = await store.client.query<{
      payload: { data: { object: { id: string } } };
    }>(
      `SELECT payload FROM outbox_events WHERE type = 'transaction.completed' AND account_id = $1`,
      [owner.accountId],
    );
    expect(events.map((e) => JSON.stringify(e.payload))).toContainEqual(
      expect.stringContaining(transaction.id),
    );
    // Every pass after finds it recorded: nothing more.
    expect((await watcher().scanOnce()).recorded).toBe(0);
    expect((await watcher(second).scanOnce()).recorded).toBe(0);
    expect(await ledger(v.id)).toBe('25.5');
    expect(await deposits(v.id)).toHaveLength(1);
    await expectInvariants();
  });

  it('credits a SOL deposit to a SOL vault once', async () => {
    const v = await vault('SOL');
    const signature = await sendDeposit(chain, wallet, address(v), '1.25', 'SOL');
    await watcher().scanOnce();
    await watcher().scanOnce();
    expect(await ledger(v.id)).toBe('1.25');
    expect(await deposits(v.id)).toMatchObject([
      { status: 'credited', amount: '1.25', signature, mint: null },
    ]);
    await expectInvariants();
  });

  it('records a foreign mint, the other currency and dust as ignored, never credited', async () => {
    const v = await vault('USDC');
    const mint = await foreignMint(chain, wallet, 1_000_000_000n);
    await sendDeposit(chain, wallet, address(v), '7', { mint });
    await sendDeposit(chain, wallet, address(v), '0.5', 'SOL');
    await sendDeposit(chain, wallet, address(v), '0.009', 'USDC');
    await watcher().scanOnce();
    // The token account is followed from the first pass on: a second pass reads it too.
    await watcher().scanOnce();
    expect(await ledger(v.id)).toBe('0');
    const rows = await deposits(v.id);
    expect(rows.map((row) => [row.status, row.ignored_reason, row.mint])).toEqual([
      ['ignored', 'other_mint', mint.toBase58()],
      ['ignored', 'other_currency', null],
      ['ignored', 'below_minimum', chain.usdcMint.toBase58()],
    ]);
    expect(rows.every((row) => row.transaction_id === null)).toBe(true);
    const page = await store.listChainDeposits(owner, v.id, { limit: 2 });
    expect(page.data.map((d) => d.ignoredReason)).toEqual(['below_minimum', 'other_currency']);
    expect(page.hasMore).toBe(true);
    const rest = await store.listChainDeposits(owner, v.id, {
      limit: 2,
      startingAfter: page.nextCursor ?? '',
    });
    expect(rest.data.map((d) => d.ignoredReason)).toEqual(['other_mint']);
    expect(rest.hasMore).toBe(false);
    await expectInvariants();
  });

  it('credits each deposit once with two watchers running at once', async () => {
    const vaults = [await vault('USDC'), await vault('SOL')];
    for (let i = 1; i <= 3; i += 1) {
      await sendDeposit(chain, wallet, address(vaults[0] as VaultRecord), `${i}`, 'USDC');
      await sendDeposit(chain, wallet, address(vaults[1] as VaultRecord), `0.0${i}`, 'SOL');
    }
    await Promise.all([
      watcher(store).scanOnce(),
      watcher(second).scanOnce(),
      watcher(store).scanOnce(),
      watcher(second).scanOnce(),
    ]);
    expect(await ledger(vaults[0]?.id ?? '')).toBe('6');
    expect(await ledger(vaults[1]?.id ?? '')).toBe('0.06');
    expect(await deposits(vaults[0]?.id ?? '')).toHaveLength(3);
    expect(await deposits(vaults[1]?.id ?? '')).toHaveLength(3);
    await expectInvariants();
  });

  it('walks back through more signatures than one pass reads, and credits each once', async () => {
    const v = await vault('SOL');
    for (let i = 1; i <= 5; i += 1) {
      await sendDeposit(chain, wallet, address(v), `0.00${i}`, 'SOL');
    }
    const small = { ...WATCH, signaturesMax: 2 };
    for (let pass = 0; pass < 4; pass += 1) await watcher(store, small).scanOnce();
    expect(await ledger(v.id)).toBe('0.015');
    await sendDeposit(chain, wallet, address(v), '0.01', 'SOL');
    for (let pass = 0; pass < 2; pass += 1) await watcher(store, small).scanOnce();
    expect(await ledger(v.id)).toBe('0.025');
    expect(await deposits(v.id)).toHaveLength(6);
    await expectInvariants();
  });

  it('sweeps credited deposits into the treasury once, the treasury paying the fee', async () => {
    const usdcVault = await vault('USDC');
    const solVault = await vault('SOL');
    await sendDeposit(chain, wallet, address(usdcVault), '40', 'USDC');
    await sendDeposit(chain, wallet, address(solVault), '2', 'SOL');
    await watcher().scanOnce();
    const treasuryUsdc = () =>
      recipientBalance(connection, {
        currency: 'USDC',
        usdcMint: chain.usdcMint,
        recipient: chain.treasury.publicKey,
      });
    const usdcBefore = await treasuryUsdc();
    const sweeper = new DepositSweeper(store, chains(), silent);
    // Drains every credited deposit (the earlier tests' too): bounded rounds.
    for (let round = 0; round < 10; round += 1) {
      if ((await sweeper.sweepOnce()) === 0) break;
    }
    expect(await store.unsweptDeposits(100)).toEqual([]);
    expect((await deposits(usdcVault.id))[0]?.status).toBe('swept');
    expect((await deposits(solVault.id))[0]?.status).toBe('swept');
    const ata = getAssociatedTokenAddressSync(chain.usdcMint, address(usdcVault));
    expect((await connection.getTokenAccountBalance(ata)).value.amount).toBe('0');
    expect(await connection.getBalance(address(solVault))).toBe(0);
    // 40 from this test, and the earlier tests' credited USDC deposits: 25.5 + 6.
    expect(await treasuryUsdc()).toBe(usdcBefore + 71_500_000n);
    // The ledger did not move: the vault was credited when the deposit was found.
    expect(await ledger(usdcVault.id)).toBe('40');
    await expectInvariants();
  });

  /** A sweeper that recorded its signed sweep and died before sending it. */
  async function recordUnsentSweep(depositId: string, vaultId: string, expire: boolean) {
    const [waiting] = (await store.unsweptDeposits(100)).filter((d) => d.depositId === depositId);
    if (waiting === undefined) throw new Error('the deposit is not waiting to be swept');
    const built = await buildSignedSweep({
      connection,
      treasury: target.signer,
      depositKey: Keypair.fromSeed(await store.depositKeySeed(vaultId)),
      currency: 'SOL',
      usdcMint: chain.usdcMint,
      amountUnits: toUnits(waiting.amount, 9),
    });
    const send = {
      signedTransaction: built.transaction.toString('base64'),
      signature: built.signature,
      lastValidBlockHeight: built.lastValidBlockHeight,
    };
    expect(await store.recordSweepSend(depositId, send, null)).toBe(true);
    // A second sweeper that signed too: refused, so only the recorded bytes are ever sent.
    expect(await second.recordSweepSend(depositId, { ...send, signature: 'other' }, null)).toBe(
      false,
    );
    if (expire) {
      const height = await connection.getBlockHeight('confirmed');
      await chain.advanceSlots(built.lastValidBlockHeight - height + 2);
    }
    return built.signature;
  }

  async function sweepRow(vaultId: string) {
    const { rows } = await store.client.query<{
      status: string;
      signature: string;
      signings: number;
      confirmed: boolean;
    }>(
      `SELECT d.status, s.signature, s.signings, s.confirmed_at IS NOT NULL AS confirmed
       FROM chain_deposits d JOIN deposit_sweeps s ON s.deposit_id = d.id WHERE d.vault_id = $1`,
      [vaultId],
    );
    return rows;
  }

  it('sends a recorded, unsent sweep with its recorded bytes, once, after a crash', async () => {
    const v = await vault('SOL');
    await sendDeposit(chain, wallet, address(v), '0.5', 'SOL');
    await watcher().scanOnce();
    const [{ id: depositId } = { id: '' }] = (
      await store.listChainDeposits(owner, v.id, { limit: 1 })
    ).data;
    const recorded = await recordUnsentSweep(depositId, v.id, false);
    expect(await connection.getBalance(address(v))).toBe(500_000_000);
    const sweepers = [
      new DepositSweeper(store, chains(), silent),
      new DepositSweeper(second, chains(), silent),
    ];
    for (let round = 0; round < 3; round += 1) {
      await Promise.all(sweepers.map((sweeper) => sweeper.sweepOnce()));
    }
    expect(await sweepRow(v.id)).toEqual([
      { status: 'swept', signature: recorded, signings: 1, confirmed: true },
    ]);
    expect(await connection.getBalance(address(v))).toBe(0);
    await expectInvariants();
  });

  it('signs a sweep again only once its recorded blockhash expired unsent', async () => {
    const v = await vault('SOL');
    await sendDeposit(chain, wallet, address(v), '0.75', 'SOL');
    await watcher().scanOnce();
    const [{ id: depositId } = { id: '' }] = (
      await store.listChainDeposits(owner, v.id, { limit: 1 })
    ).data;
    const expired = await recordUnsentSweep(depositId, v.id, true);
    const sweepers = [
      new DepositSweeper(store, chains(), silent),
      new DepositSweeper(second, chains(), silent),
    ];
    for (let round = 0; round < 3; round += 1) {
      await Promise.all(sweepers.map((sweeper) => sweeper.sweepOnce()));
    }
    const [row] = await sweepRow(v.id);
    expect(row).toMatchObject({ status: 'swept', signings: 2, confirmed: true });
    expect(row?.signature).not.toBe(expired);
    // Swept once: the address is empty, not overdrawn by a second sweep.
    expect(await connection.getBalance(address(v))).toBe(0);
    const status = await connection.getSignatureStatus(expired, { searchTransactionHistory: true });
    expect(status.value).toBeNull();
    await expectInvariants();
  });

  it('the invariant refuses a credited deposit that no deposit transaction of its amount backs', async () => {
    const v = await vault('USDC');
    const funded = await store.deposit(owner, v.id, new Decimal('100'));
    const insert = `INSERT INTO chain_deposits (id, vault_id, account_id, mode, currency, signature,
        instruction_index, slot, sender, amount, status, transaction_id, found_at, credited_at)
      VALUES ($1, $2, $3, 'test', 'USDC', $4, 0, 1, 'sender', $5, 'credited', $6, now(), now())`;
    const id = newId('deposit');
    await store.client.query(insert, [
      id,
      v.id,
      owner.accountId,
      `sig-${id}`,
      '5',
      funded.deposit.id,
    ]);
    try {
      expect(await checkInvariants(store.client)).toEqual([
        {
          invariant: 'every credited chain deposit is exactly one completed deposit of its amount',
          detail: `chain deposit ${id}`,
        },
      ]);
    } finally {
      await store.client.query('DELETE FROM chain_deposits WHERE id = $1', [id]);
    }
    await expectInvariants();
  });

  it('the invariant refuses a deposit transaction from the chain that credits no found transfer', async () => {
    const v = await vault('SOL');
    const id = newId('transaction');
    await store.client.query(
      `INSERT INTO transactions (id, account_id, mode, vault_id, type, status, currency, amount,
         created_at, updated_at, completed_at, chain_deposit)
       VALUES ($1, $2, 'test', $3, 'deposit', 'completed', 'SOL', 0, now(), now(), now(), $4)`,
      [id, owner.accountId, v.id, JSON.stringify({ signature: 'nowhere', sender: 's', slot: 1 })],
    );
    try {
      expect(await checkInvariants(store.client)).toEqual([
        {
          invariant: 'every credited chain deposit is exactly one completed deposit of its amount',
          detail: `deposit transaction ${id} from chain has no deposit of its signature`,
        },
      ]);
    } finally {
      await store.client.query('DELETE FROM transactions WHERE id = $1', [id]);
    }
    await expectInvariants();
  });

  it('refuses the test pause outside test mode', () => {
    expect(() =>
      loadConfig({ SPENDGATE_TEST_DEPOSIT_PAUSE: '1', SPENDGATE_MODES: 'test,live' }),
    ).toThrow(ConfigError);
    expect(
      loadConfig({ SPENDGATE_TEST_DEPOSIT_PAUSE: '1', SPENDGATE_MODES: 'test' }).solana
        .testDepositPause,
    ).toBe(true);
  });
});
