import { readFileSync } from 'node:fs';
import { Keypair, SystemProgram, Transaction, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Decimal, type Scope } from '../../src/core/index.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import { keypairSigner } from '../../src/solana/signer.js';
import { broadcast, buildSignedTransfer } from '../../src/solana/transfers.js';
import { createWorkerMetrics, type WorkerMetrics } from '../../src/workers/metrics.js';
import { reserveValuationOf } from '../../src/cli/price-book.js';
import { loadConfig } from '../../src/config/env.js';
import { ReserveReconciler } from '../../src/workers/reserves.js';
import { SolanaTransferWorker, type ChainTarget } from '../../src/workers/solana-transfers.js';
import { recordUnsentSolTransfer } from '../support/chain-sends.js';
import { forEachDatabase } from '../support/databases.js';
import { parseScrape, type Scrape } from '../support/metrics.js';
import { useTestStore } from '../support/store.js';

/**
 * The reconciliation of reserves against a real Solana runtime (solana-bankrun behind the local
 * JSON-RPC endpoint) and the real PostgreSQL (and the embedded PGlite): every term of the formula (the treasury, unswept
 * deposits, what is owed, in-flight transfers landed and not), a shortfall made on purpose by
 * a transfer out of the treasury behind the ledger's back (caught by one run: stored, in the
 * metrics, firing the shipped alert rule, logged at error level), and new external transfers
 * of the short currency kept waiting until a run finds it covered again.
 */

interface Logged {
  readonly level: 'warn' | 'info' | 'error';
  readonly object: Record<string, unknown>;
  readonly message: string;
}

const ALERTS = new URL('../../docs/grafana/spendgate-alerts.yml', import.meta.url);

/** The alert rules' names and expressions (each expression on its `expr:` line). */
function alertRules(): { alert: string; expr: string }[] {
  const text = readFileSync(ALERTS, 'utf8');
  const names = [...text.matchAll(/^\s*- alert: (\w+)$/gm)].map((match) => match[1] ?? '');
  const exprs = [...text.matchAll(/^\s*expr: (.+)$/gm)].map((match) => match[1] ?? '');
  expect(exprs.length).toBe(names.length);
  return names.map((alert, index) => ({ alert, expr: exprs[index] ?? '' }));
}

/** The series for which a rule of the form `metric < number` (or >) fires in `scraped`. */
function firing(expr: string, scraped: Scrape): Record<string, string>[] {
  const match = /^(\w+) ([<>]) (\d+(?:\.\d+)?)$/.exec(expr);
  if (match?.[1] === undefined || match[3] === undefined) throw new Error(`not simple: ${expr}`);
  const threshold = Number(match[3]);
  return scraped
    .samples(match[1])
    .filter(({ value }) => (match[2] === '<' ? value < threshold : value > threshold))
    .map(({ labels }) => labels);
}

forEachDatabase('the reconciliation of reserves', (database) => {
  const t = useTestStore(database, { systemClock: true });
  let chain: LocalSolana;
  let target: ChainTarget;
  let metrics: WorkerMetrics;
  let reconciler: ReserveReconciler;
  let transfers: SolanaTransferWorker;
  let rentExemptLamports: bigint;
  const logged: Logged[] = [];
  const log = {
    warn: (object: object, message: string) => {
      logged.push({ level: 'warn', object: object as Record<string, unknown>, message });
    },
    info: (message: string) => {
      logged.push({ level: 'info', object: {}, message });
    },
    error: (object: object, message: string) => {
      logged.push({ level: 'error', object: object as Record<string, unknown>, message });
    },
  };
  let solVault: string;
  let usdcVault: string;
  let owner: Scope;
  /** Where the treasury's SOL went behind the ledger's back. */
  const elsewhere = Keypair.generate();

  beforeAll(async () => {
    chain = await startLocalSolana({ slotIntervalMs: 0, treasuryLamports: 50_000_000_000n });
    target = {
      connection: chain.connection(),
      signer: keypairSigner(chain.treasury),
      usdcMint: chain.usdcMint,
    };
    metrics = createWorkerMetrics();
    reconciler = new ReserveReconciler(
      t.store,
      { test: target, live: null },
      log,
      { everyMs: 60_000, roundMs: 1_000 },
      metrics,
    );
    transfers = new SolanaTransferWorker(
      t.store,
      { test: target, live: null },
      log,
      undefined,
      metrics,
    );
    rentExemptLamports = BigInt(await target.connection.getMinimumBalanceForRentExemption(0));
    owner = t.owner;
    solVault = (await t.vault(owner, '10', { currency: 'SOL' })).id;
    usdcVault = (await t.vault(owner, '100')).id;
  });

  afterAll(async () => {
    await chain.close();
  });

  afterEach(async () => {
    await t.expectInvariants();
  });

  async function lamports(address: PublicKey): Promise<bigint> {
    return BigInt(await target.connection.getBalance(address, 'confirmed'));
  }

  /** The treasury's SOL as the formula counts it: lamports less the rent-exempt minimum. */
  async function treasurySol(): Promise<Decimal> {
    return new Decimal(
      ((await lamports(chain.treasury.publicKey)) - rentExemptLamports).toString(),
    ).div(1e9);
  }

  async function run(currency: 'SOL' | 'USDC') {
    const runs = await reconciler.runOnce();
    const found = runs.find((r) => r.mode === 'test' && r.currency === currency);
    if (found === undefined) throw new Error(`no ${currency} run: ${JSON.stringify(logged)}`);
    return found;
  }

  /** A SOL transfer the ledger knows nothing of, landed. */
  async function moveSol(from: Keypair, to: PublicKey, lamportsMoved: bigint): Promise<void> {
    const latest = await target.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: from.publicKey, ...latest }).add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: lamportsMoved }),
    );
    tx.sign(from);
    await target.connection.sendRawTransaction(tx.serialize());
  }

  /** Signs, records and sends a SOL transfer as the worker would, without completing it. */
  async function sendBehindTheWorker(transferId: string, lamportsSent: bigint): Promise<void> {
    const built = await buildSignedTransfer({
      connection: target.connection,
      signer: target.signer,
      currency: 'SOL',
      usdcMint: chain.usdcMint,
      recipient: Keypair.generate().publicKey,
      amountUnits: lamportsSent,
    });
    const recorded = await t.store.recordChainSend(
      transferId,
      {
        signedTransaction: built.transaction.toString('base64'),
        signature: built.signature,
        lastValidBlockHeight: built.lastValidBlockHeight,
      },
      null,
    );
    expect(recorded).toBe(true);
    await broadcast(target.connection, built.transaction);
  }

  it('counts the treasury, exactly, against what the vaults are owed', async () => {
    const sol = await run('SOL');
    expect(sol).toMatchObject({
      treasuryAddress: chain.treasury.publicKey.toBase58(),
      unsweptDeposits: '0.000000000',
      owed: '10.000000000',
      inFlight: '0.000000000',
      inFlightLanded: '0.000000000',
      short: false,
    });
    expect(new Decimal(sol.treasuryBalance).eq(await treasurySol())).toBe(true);
    expect(new Decimal(sol.ratio).eq(new Decimal(sol.reserves).div(10).toDecimalPlaces(9, 1))).toBe(
      true,
    );
    const usdc = await run('USDC');
    // The local chain funds the treasury's USDC account with 1,000,000 USDC.
    expect(usdc).toMatchObject({
      treasuryBalance: '1000000.000000000',
      owed: '100.000000000',
      reserves: '1000000.000000000',
      liabilities: '100.000000000',
      ratio: '10000.000000000',
      shortfall: '0.000000000',
      short: false,
    });
  });

  it('counts credited deposits not yet swept as reserves', async () => {
    const { deposit } = await t.store.deposit(owner, usdcVault, '5');
    await t.store.client.query(
      `INSERT INTO chain_deposits (id, vault_id, account_id, mode, currency, signature,
         instruction_index, slot, sender, mint, amount, status, transaction_id, found_at, credited_at)
       VALUES ('dep_test_1', $1, $2, 'test', 'USDC', $3, 0, 1, $4, $5, 5, 'credited', $6, now(), now())`,
      [
        usdcVault,
        owner.accountId,
        'sig-test-deposit-1',
        Keypair.generate().publicKey.toBase58(),
        chain.usdcMint.toBase58(),
        deposit.id,
      ],
    );
    const usdc = await run('USDC');
    expect(usdc).toMatchObject({
      unsweptDeposits: '5.000000000',
      owed: '105.000000000',
      reserves: '1000005.000000000',
      liabilities: '105.000000000',
    });
    // A sweep signed and not landed: the money is still at the address, still counted.
    const sweeper = Keypair.generate();
    const airdrop = await target.connection.requestAirdrop(sweeper.publicKey, 1_000_000_000);
    const latest = await target.connection.getLatestBlockhash('confirmed');
    await target.connection.confirmTransaction({ signature: airdrop, ...latest }, 'confirmed');
    const sweep = new Transaction({ feePayer: sweeper.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: sweeper.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    );
    sweep.sign(sweeper);
    const sweepSignature = await target.connection.sendRawTransaction(sweep.serialize());
    const unsent = new Transaction({ feePayer: sweeper.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: sweeper.publicKey,
        toPubkey: sweeper.publicKey,
        lamports: 1,
      }),
    );
    unsent.sign(sweeper);
    const unsentSignature = bs58.encode(unsent.signature as Buffer);
    await t.store.client.query(
      `INSERT INTO deposit_sweeps (deposit_id, signed_transaction, signature, last_valid_block_height, signed_at)
       VALUES ('dep_test_1', 'AA==', $1, 1, now())`,
      [unsentSignature],
    );
    expect((await run('USDC')).unsweptDeposits).toBe('5.000000000');
    // The sweep landed by the balance's slot, not yet recorded by the sweeper: the money is
    // in the treasury, so it comes off unswept rather than counting twice.
    await target.connection.confirmTransaction(
      { signature: sweepSignature, ...latest },
      'confirmed',
    );
    await t.store.client.query(
      `UPDATE deposit_sweeps SET signature = $1 WHERE deposit_id = 'dep_test_1'`,
      [sweepSignature],
    );
    expect((await run('USDC')).unsweptDeposits).toBe('0.000000000');
    // A swept (or ignored) row is no longer at a deposit address: not counted.
    await t.store.client.query(
      `UPDATE chain_deposits SET status = 'swept', swept_at = now() WHERE id = 'dep_test_1'`,
    );
    expect((await run('USDC')).unsweptDeposits).toBe('0.000000000');
  });

  it('takes off the liabilities in-flight transfers that landed, and only those', async () => {
    const landed = await t.store.createExternalTransfer(owner, {
      fromVaultId: solVault,
      address: Keypair.generate().publicKey.toBase58(),
      amount: '2',
      memo: null,
    });
    const notLanded = await t.store.createExternalTransfer(owner, {
      fromVaultId: solVault,
      address: Keypair.generate().publicKey.toBase58(),
      amount: '1',
      memo: null,
    });
    const notSigned = await t.store.createExternalTransfer(owner, {
      fromVaultId: solVault,
      address: Keypair.generate().publicKey.toBase58(),
      amount: '0.5',
      memo: null,
    });
    await sendBehindTheWorker(landed.id, 2_000_000_000n);
    const unsent = await recordUnsentSolTransfer({
      store: t.store,
      target,
      chain,
      transferId: notLanded.id,
      recipient: Keypair.generate().publicKey,
      expire: false,
    });
    expect(unsent.recorded).toBe(true);
    const sol = await run('SOL');
    // The holds are all still owed; 2 SOL have left the treasury, 1 SOL is signed but not sent,
    // 0.5 SOL is not even signed (not in flight).
    expect(sol).toMatchObject({
      owed: '10.000000000',
      inFlight: '3.000000000',
      inFlightLanded: '2.000000000',
      inFlightCount: 2,
      liabilities: '8.000000000',
      short: false,
    });
    const treasury = await treasurySol();
    expect(sol.treasuryBalance).toBe(treasury.toFixed(9));
    expect(sol.reserves).toBe(treasury.toFixed(9));
    // The transfer worker completes them all; then nothing is in flight.
    for (let round = 0; round < 5; round++) await transfers.sendOnce();
    for (const id of [landed.id, notLanded.id, notSigned.id]) {
      expect((await t.store.getTransfer(owner, id)).status).toBe('completed');
    }
    const after = await run('SOL');
    expect(after).toMatchObject({
      owed: '6.500000000',
      inFlight: '0.000000000',
      liabilities: '6.500000000',
      short: false,
    });
  });

  it('detects a shortfall made behind the ledger’s back in one run: stored, exported, alerting, logged', async () => {
    // Leave the treasury 4 SOL (and its rent-exempt minimum) while the ledger owes 6.5.
    const keep = 4_000_000_000n + rentExemptLamports;
    const fee = 5_000n;
    const moved = (await lamports(chain.treasury.publicKey)) - keep - fee;
    await moveSol(chain.treasury, elsewhere.publicKey, moved);
    expect(await lamports(chain.treasury.publicKey)).toBe(keep);
    const errorsBefore = logged.filter((entry) => entry.level === 'error').length;
    const labels = { mode: 'test', currency: 'SOL' };

    const sol = await run('SOL');
    expect(sol).toMatchObject({
      treasuryBalance: '4.000000000',
      reserves: '4.000000000',
      liabilities: '6.500000000',
      shortfall: '2.500000000',
      ratio: '0.615384615',
      short: true,
    });
    const errors = logged.filter((entry) => entry.level === 'error').slice(errorsBefore);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.object).toMatchObject({
      ...labels,
      shortfall: '2.500000000',
      ratio: '0.615384615',
    });
    const [stored] = (await t.store.latestReserveRuns(['SOL'])).filter((r) => r.mode === 'test');
    expect(stored).toEqual(sol);

    const scraped = parseScrape(await metrics.registry.metrics());
    expect(scraped.value('spendgate_reserve_ratio', labels)).toBe(0.615384615);
    expect(scraped.value('spendgate_reserve_shortfall', labels)).toBe(2.5);
    expect(scraped.value('spendgate_reserve_ratio', { mode: 'test', currency: 'USDC' })).toBe(
      Number((await run('USDC')).ratio),
    );
    const rules = alertRules();
    const short = rules.find((rule) => rule.alert === 'SpendgateReservesShort');
    expect(short).toBeDefined();
    expect(firing(short?.expr ?? '', parseScrape(await metrics.registry.metrics()))).toEqual([
      labels,
    ]);
  });

  it('keeps new transfers of the short currency waiting, says why once, and sends them once covered', async () => {
    const waiting = await t.store.createExternalTransfer(owner, {
      fromVaultId: solVault,
      address: Keypair.generate().publicKey.toBase58(),
      amount: '1',
      memo: null,
    });
    const usdcRecipient = Keypair.generate().publicKey;
    const other = await t.store.createExternalTransfer(owner, {
      fromVaultId: usdcVault,
      address: usdcRecipient.toBase58(),
      amount: '3',
      memo: null,
    });
    const warnsBefore = logged.length;
    for (let round = 0; round < 3; round++) await transfers.sendOnce();
    // USDC is covered: its transfer went; the SOL one waits, unsigned, its reason logged once.
    expect((await t.store.getTransfer(owner, other.id)).status).toBe('completed');
    expect((await t.store.getTransfer(owner, waiting.id)).status).toBe('pending');
    expect(
      (
        await t.store.client.query('SELECT 1 FROM transfer_chain_sends WHERE transfer_id = $1', [
          waiting.id,
        ])
      ).rows,
    ).toEqual([]);
    const waits = logged
      .slice(warnsBefore)
      .filter((entry) => entry.object.transferId === waiting.id);
    expect(waits.map((entry) => entry.level)).toEqual(['warn']);
    expect(waits[0]?.object).toMatchObject({
      mode: 'test',
      currency: 'SOL',
      shortfall: '2.500000000',
    });
    const scraped = parseScrape(await metrics.registry.metrics());
    expect(
      scraped.value('spendgate_transfers_waiting_reserves', { mode: 'test', currency: 'SOL' }),
    ).toBe(1);
    expect(
      scraped.value('spendgate_transfers_waiting_reserves', { mode: 'test', currency: 'USDC' }),
    ).toBe(0);

    // The operator funds the treasury back; the next run finds SOL covered and lifts the wait.
    await moveSol(elsewhere, chain.treasury.publicKey, 10_000_000_000n);
    expect((await run('SOL')).short).toBe(false);
    for (let round = 0; round < 3; round++) await transfers.sendOnce();
    expect((await t.store.getTransfer(owner, waiting.id)).status).toBe('completed');
    const after = parseScrape(await metrics.registry.metrics());
    expect(
      after.value('spendgate_transfers_waiting_reserves', { mode: 'test', currency: 'SOL' }),
    ).toBe(0);
    expect(firing('spendgate_reserve_ratio < 1', after)).toEqual([]);
  });

  it('owes nothing for an overdrawn vault: its debt is not a reserve of the others', async () => {
    const before = new Decimal((await run('USDC')).owed);
    const vault = await t.vault(owner, '5');
    expect(new Decimal((await run('USDC')).owed).minus(before).toFixed(2)).toBe('5.00');
    const card = await t.store.createCard(owner, {
      vaultId: vault.id,
      cardholderName: 'Ada',
      metadata: {},
    });
    // A force capture of 8.00 on 5.00 (contract v1.2, section 16): the ledger is -3.00.
    await t.store.forceCapture(owner, {
      cardId: card.id,
      amount: '8',
      currency: 'USDC',
      merchant: { name: 'Cafe Rio', mcc: '5812', country: 'US' },
      networkTransactionId: `ntx_reserves_${vault.id}`,
    });
    expect((await t.store.getVault(owner, vault.id)).ledger.toFixed(2)).toBe('-3.00');
    // Counted at 0, not at -3.00: netting it off would let the other vaults' money cover it.
    expect(new Decimal((await run('USDC')).owed).eq(before)).toBe(true);
  });

  it('runs when asked from the command line, and otherwise once its interval is up', async () => {
    await run('SOL');
    expect(await reconciler.round()).toEqual([]);
    const requestId = await t.store.requestReserveRun();
    expect(await t.store.reserveRunRequestOpen(requestId)).toBe(true);
    const runs = await reconciler.round();
    expect(runs.map((r) => `${r.mode}:${r.currency}`)).toEqual(['test:SOL', 'test:USDC']);
    expect(await t.store.reserveRunRequestOpen(requestId)).toBe(false);
  });
  it('values the reserves in USD at the feed price beside their own figures, and not on a stale one', async () => {
    const chains = { test: target, live: null };
    const valued = new ReserveReconciler(
      t.store,
      chains,
      log,
      { everyMs: 60_000, roundMs: 1_000 },
      metrics,
      reserveValuationOf(loadConfig({ SPENDGATE_MODES: 'test' }).prices, chains),
    );
    const series = (scrape: string, currency: string, term: string) =>
      new RegExp(
        `spendgate_reserve_value_usd\\{mode="test",currency="${currency}",term="${term}"\\} (\\S+)`,
      ).exec(scrape)?.[1] ?? null;
    await chain.setPrice('SOL/USD', { price: '142.17' });
    await chain.setPrice('USDC/USD', { price: '0.9998' });
    const runs = await valued.runOnce();
    const sol = runs.find((r) => r.currency === 'SOL');
    const usdc = runs.find((r) => r.currency === 'USDC');
    const inUsd = (amount: string | undefined, price: string) =>
      new Decimal(amount ?? 'NaN').times(price).toDecimalPlaces(2, Decimal.ROUND_DOWN).toNumber();
    const scraped = await metrics.registry.metrics();
    expect(Number(series(scraped, 'SOL', 'reserves'))).toBe(inUsd(sol?.reserves, '142.17'));
    expect(Number(series(scraped, 'SOL', 'liabilities'))).toBe(inUsd(sol?.liabilities, '142.17'));
    expect(Number(series(scraped, 'USDC', 'reserves'))).toBe(inUsd(usdc?.reserves, '0.9998'));
    expect(
      logged.some((entry) => entry.message.startsWith('reserves test SOL at 142.17 USD')),
    ).toBe(true);
    // A price a minute old values nothing: the series goes, the run's own figures stay.
    await chain.setPrice('SOL/USD', {
      price: '142.17',
      publishTimeSec: Math.floor(Date.now() / 1000) - 60,
    });
    const stale = await valued.runOnce();
    expect(stale.find((r) => r.currency === 'SOL')?.reserves).toBe(sol?.reserves);
    expect(series(await metrics.registry.metrics(), 'SOL', 'reserves')).toBeNull();
    await chain.setPrice('SOL/USD', { price: '150' });
  });
});
