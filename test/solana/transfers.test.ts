/**
 * The chain-side steps of the transfer worker (src/solana/transfers.ts, src/solana/signer.ts)
 * against the local bankrun cluster through the real web3.js Connection: exact amounts, the
 * idempotent token account, on-chain failures, rebroadcasts that land once, blockhash expiry,
 * and a treasury key loaded from configuration without its secret ever reaching a message.
 */
import { createPrivateKey, sign as ed25519Sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  type Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';
import {
  describeSigner,
  keypairSigner,
  loadTreasurySigner,
  KEYPAIR_FILE_BYTES_MAX,
  type TreasurySigner,
} from '../../src/solana/signer.js';
import {
  broadcast,
  buildSignedTransfer,
  checkTransfer,
  type ChainCurrency,
  recipientBalance,
  toUnits,
  TransferRefusedError,
  type TransferState,
} from '../../src/solana/transfers.js';

let solana: LocalSolana;
let connection: Connection;
let signer: TreasurySigner;
let tmp: string;

beforeAll(async () => {
  solana = await startLocalSolana({ slotIntervalMs: 0 });
  connection = solana.connection();
  signer = keypairSigner(solana.treasury);
  tmp = mkdtempSync(join(tmpdir(), 'spendgate-signer-'));
});

afterAll(async () => {
  await solana.close();
  rmSync(tmp, { recursive: true, force: true });
});

function build(currency: ChainCurrency, recipient: PublicKey, amountUnits: bigint, memo?: string) {
  return buildSignedTransfer({
    connection,
    signer,
    currency,
    usdcMint: solana.usdcMint,
    recipient,
    amountUnits,
    ...(memo === undefined ? {} : { memo }),
  });
}

function balance(currency: ChainCurrency, recipient: PublicKey) {
  return recipientBalance(connection, { currency, usdcMint: solana.usdcMint, recipient });
}

/** Polls checkTransfer as the worker does, until it is no longer pending. */
async function settle(sent: {
  signature: string;
  lastValidBlockHeight: number;
}): Promise<TransferState> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const state = await checkTransfer(connection, sent);
    if (state.state !== 'pending') return state;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { state: 'pending' };
}

describe('buildSignedTransfer, broadcast, checkTransfer', () => {
  it('sends 1.5 SOL and 12.345678 USDC with exact amounts', async () => {
    const sol = Keypair.generate().publicKey;
    const usdc = Keypair.generate().publicKey;
    const treasuryBefore = await balance('SOL', solana.treasury.publicKey);

    const solTransfer = await build('SOL', sol, toUnits('1.5', 9));
    expect(bs58.decode(solTransfer.signature)).toHaveLength(64);
    await broadcast(connection, solTransfer.transaction);
    expect(await settle(solTransfer)).toEqual({ state: 'landed' });
    expect(await balance('SOL', sol)).toBe(1_500_000_000n);
    expect(treasuryBefore - (await balance('SOL', solana.treasury.publicKey))).toBe(
      1_500_000_000n + 5_000n,
    );

    expect(await balance('USDC', usdc)).toBe(0n);
    const usdcTransfer = await build('USDC', usdc, toUnits('12.345678', 6));
    await broadcast(connection, usdcTransfer.transaction);
    expect(await settle(usdcTransfer)).toEqual({ state: 'landed' });
    expect(await balance('USDC', usdc)).toBe(12_345_678n);
    const ata = getAssociatedTokenAddressSync(solana.usdcMint, usdc);
    expect((await connection.getTokenAccountBalance(ata)).value.uiAmountString).toBe('12.345678');
  });

  it('sends USDC to a recipient whose token account already exists', async () => {
    const owner = Keypair.generate().publicKey;
    const first = await build('USDC', owner, 1_000_000n);
    await broadcast(connection, first.transaction);
    expect(await settle(first)).toEqual({ state: 'landed' });
    const ata = getAssociatedTokenAddressSync(solana.usdcMint, owner);
    expect(await connection.getAccountInfo(ata)).not.toBeNull();

    const second = await build('USDC', owner, 2_500_000n);
    expect(second.signature).not.toBe(first.signature);
    await broadcast(connection, second.transaction);
    expect(await settle(second)).toEqual({ state: 'landed' });
    expect(await balance('USDC', owner)).toBe(3_500_000n);
  });

  it('reports a transfer beyond the treasury balance as failed, moving nothing', async () => {
    const owner = Keypair.generate().publicKey;
    const treasuryUnits = (await connection.getTokenAccountBalance(solana.treasuryUsdcAccount))
      .value.amount;
    const transfer = await build('USDC', owner, BigInt(treasuryUnits) + 1n);
    await broadcast(connection, transfer.transaction);
    const state = await settle(transfer);
    expect(state.state).toBe('failed');
    expect(state.state === 'failed' && state.reason).toMatch(/InstructionError/);
    expect(await balance('USDC', owner)).toBe(0n);
    // The whole transaction failed: not even the token account was created.
    expect(
      await connection.getAccountInfo(getAssociatedTokenAddressSync(solana.usdcMint, owner)),
    ).toBeNull();
    expect((await connection.getTokenAccountBalance(solana.treasuryUsdcAccount)).value.amount).toBe(
      treasuryUnits,
    );
  });

  it('reports SOL below the rent-exempt minimum to a new account as failed', async () => {
    const recipient = Keypair.generate().publicKey;
    const transfer = await build('SOL', recipient, 1n);
    await broadcast(connection, transfer.transaction);
    const state = await settle(transfer);
    expect(state).toEqual({
      state: 'failed',
      reason: JSON.stringify({ InsufficientFundsForRent: { account_index: 1 } }),
    });
    expect(await balance('SOL', recipient)).toBe(0n);
  });

  it('lands rebroadcast bytes once (as after a crash)', async () => {
    const recipient = Keypair.generate().publicKey;
    const transfer = await build('SOL', recipient, 2_000_000_000n);
    // Persisted, not sent yet: pending while the blockhash is valid.
    expect(await checkTransfer(connection, transfer)).toEqual({ state: 'pending' });
    await broadcast(connection, transfer.transaction);
    await broadcast(connection, transfer.transaction);
    expect(await settle(transfer)).toEqual({ state: 'landed' });
    // The worker restarts and sends the persisted bytes again.
    await broadcast(connection, Buffer.from(transfer.transaction.toString('base64'), 'base64'));
    expect(await settle(transfer)).toEqual({ state: 'landed' });
    expect(await balance('SOL', recipient)).toBe(2_000_000_000n);
  });

  it('expires a transfer whose blockhash is past its last valid height', async () => {
    const recipient = Keypair.generate().publicKey;
    const stale = await build('USDC', recipient, 5_000_000n);
    const height = await connection.getBlockHeight('confirmed');
    expect(stale.lastValidBlockHeight).toBeGreaterThan(height);
    await solana.advanceSlots(stale.lastValidBlockHeight - height + 1);
    expect(await checkTransfer(connection, stale)).toEqual({ state: 'expired' });

    // Those bytes can never land now, however often they are sent.
    await broadcast(connection, stale.transaction);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await checkTransfer(connection, stale)).toEqual({ state: 'expired' });
    expect(await balance('USDC', recipient)).toBe(0n);

    // So signing anew is safe, and lands.
    const fresh = await build('USDC', recipient, 5_000_000n);
    expect(fresh.lastValidBlockHeight).toBeGreaterThan(stale.lastValidBlockHeight);
    await broadcast(connection, fresh.transaction);
    expect(await settle(fresh)).toEqual({ state: 'landed' });
    expect(await checkTransfer(connection, stale)).toEqual({ state: 'expired' });
    expect(await balance('USDC', recipient)).toBe(5_000_000n);
  });

  it('adds a memo through the SPL Memo program', async () => {
    const recipient = Keypair.generate().publicKey;
    const transfer = await build('USDC', recipient, 7n, 'spendgate transfer tr_123');
    const simulated = await connection.simulateTransaction(
      VersionedTransaction.deserialize(transfer.transaction),
      { sigVerify: true },
    );
    expect(simulated.value.err).toBeNull();
    expect(simulated.value.logs?.join('\n')).toContain('spendgate transfer tr_123');
    await broadcast(connection, transfer.transaction);
    expect(await settle(transfer)).toEqual({ state: 'landed' });
    expect(await balance('USDC', recipient)).toBe(7n);
    await expect(build('SOL', recipient, 1n, 'x'.repeat(257))).rejects.toThrow(
      TransferRefusedError,
    );
    await expect(build('SOL', recipient, 1n, '')).rejects.toThrow(TransferRefusedError);
  });

  it('refuses transfers that can never be right', async () => {
    const recipient = Keypair.generate().publicKey;
    for (const units of [0n, -1n, 2n ** 64n]) {
      await expect(build('SOL', recipient, units)).rejects.toThrow(TransferRefusedError);
    }
    await expect(build('SOL', solana.treasury.publicKey, 1n)).rejects.toThrow(TransferRefusedError);
    // A token account's address as the USDC "owner" would fund an account nobody controls.
    await expect(build('USDC', solana.treasuryUsdcAccount, 1n)).rejects.toThrow(/off-curve/);
    expect(await build('SOL', recipient, 2n ** 64n - 1n)).toMatchObject({
      signature: expect.any(String) as unknown,
    });
  });

  it('works with a remote-style signer, and checks what it returns', async () => {
    // What a KMS signer does: sign the message bytes elsewhere, attach the signature.
    const pkcs8 = Buffer.concat([
      Buffer.from('302e020100300506032b657004220420', 'hex'),
      solana.treasury.secretKey.subarray(0, 32),
    ]);
    const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
    const remote: TreasurySigner = {
      publicKey: solana.treasury.publicKey,
      signTransaction: (transaction) => {
        transaction.addSignature(
          solana.treasury.publicKey,
          ed25519Sign(null, transaction.serializeMessage(), key),
        );
        return Promise.resolve(transaction);
      },
    };
    const recipient = Keypair.generate().publicKey;
    const transfer = await buildSignedTransfer({
      connection,
      signer: remote,
      currency: 'SOL',
      usdcMint: solana.usdcMint,
      recipient,
      amountUnits: 1_000_000n,
    });
    await broadcast(connection, transfer.transaction);
    expect(await settle(transfer)).toEqual({ state: 'landed' });
    expect(await balance('SOL', recipient)).toBe(1_000_000n);

    const swapping: TreasurySigner = {
      publicKey: solana.treasury.publicKey,
      signTransaction: (transaction) => {
        const other = new Transaction({
          feePayer: solana.treasury.publicKey,
          blockhash: transaction.recentBlockhash ?? '',
          lastValidBlockHeight: transaction.lastValidBlockHeight ?? 0,
        }).add(
          SystemProgram.transfer({
            fromPubkey: solana.treasury.publicKey,
            toPubkey: Keypair.generate().publicKey,
            lamports: 1,
          }),
        );
        other.sign(solana.treasury);
        return Promise.resolve(other);
      },
    };
    const lazy: TreasurySigner = {
      publicKey: solana.treasury.publicKey,
      signTransaction: (transaction) => Promise.resolve(transaction),
    };
    const input = {
      connection,
      currency: 'SOL' as const,
      usdcMint: solana.usdcMint,
      recipient,
      amountUnits: 1n,
    };
    await expect(buildSignedTransfer({ ...input, signer: swapping })).rejects.toThrow(
      /different message/,
    );
    await expect(buildSignedTransfer({ ...input, signer: lazy })).rejects.toThrow(/did not sign/);
  });
});

describe('loadTreasurySigner', () => {
  /** The message contains neither the input nor any 8-character piece of it. */
  function expectNoLeak(message: string, secret: string) {
    expect(message).not.toContain(secret);
    for (let i = 0; i + 8 <= secret.length; i += 1) {
      expect(message).not.toContain(secret.slice(i, i + 8));
    }
  }

  function refusal(setting: string): string {
    try {
      loadTreasurySigner(setting);
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).cause).toBeUndefined();
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  }

  it('loads a Solana CLI keypair file and a base58 secret key', async () => {
    const keypair = Keypair.generate();
    const file = join(tmp, 'treasury.json');
    writeFileSync(file, JSON.stringify(Array.from(keypair.secretKey)), { mode: 0o600 });
    const fromFile = loadTreasurySigner(file);
    expect(fromFile.publicKey.equals(keypair.publicKey)).toBe(true);
    expect(describeSigner(fromFile)).toBe(keypair.publicKey.toBase58());

    const secret = bs58.encode(keypair.secretKey);
    const fromBase58 = loadTreasurySigner(`  ${secret}\n`);
    expect(fromBase58.publicKey.equals(keypair.publicKey)).toBe(true);
    // Nothing that might be logged shows the secret.
    expectNoLeak(inspect(fromBase58, { depth: 10, showHidden: true }), secret);
    expectNoLeak(JSON.stringify(fromBase58), secret);

    // Both sign like the keypair itself.
    const tx = new Transaction({
      feePayer: keypair.publicKey,
      blockhash: PublicKey.default.toBase58(),
      lastValidBlockHeight: 1,
    }).add(
      SystemProgram.transfer({
        fromPubkey: keypair.publicKey,
        toPubkey: keypair.publicKey,
        lamports: 1,
      }),
    );
    expect((await fromFile.signTransaction(tx)).verifySignatures()).toBe(true);
  });

  it('refuses garbage, wrong lengths and invalid keys without quoting them', () => {
    const keypair = Keypair.generate();
    const secret = bs58.encode(keypair.secretKey);
    const cases = [
      'not-a-key-at-all but maybe a mistyped secret',
      bs58.encode(keypair.secretKey.subarray(0, 32)),
      `${secret}0`, // '0' is not base58: read as a path, which does not exist
      bs58.encode(Buffer.concat([keypair.secretKey, Buffer.from([1])])),
      // 64 bytes whose public half belongs to another key.
      bs58.encode(
        Buffer.concat([keypair.secretKey.subarray(0, 32), Keypair.generate().publicKey.toBytes()]),
      ),
      join(tmp, 'missing', secret),
    ];
    for (const setting of cases) expectNoLeak(refusal(setting), setting);
    expect(refusal(' ')).toMatch(/empty/);
    expect(refusal(cases[1] ?? '')).toMatch(/32 bytes/);
    expect(refusal(cases[4] ?? '')).toMatch(/not a valid ed25519 keypair/);
  });

  it('refuses bad keypair files without quoting their path or content', () => {
    const keypair = Keypair.generate();
    const secret = bs58.encode(keypair.secretKey);
    const numbers = JSON.stringify(Array.from(keypair.secretKey));
    const files: [string, string | Buffer, RegExp][] = [
      ['huge.json', ' '.repeat(KEYPAIR_FILE_BYTES_MAX) + numbers, /larger than/],
      ['base58.txt', secret, /not JSON/],
      ['truncated.json', numbers.slice(0, -1), /not JSON/],
      ['short.json', JSON.stringify(Array.from(keypair.secretKey.subarray(0, 63))), /64 bytes/],
      ['floats.json', JSON.stringify(Array.from(keypair.secretKey, (n) => n + 0.5)), /byte/],
      ['object.json', JSON.stringify({ secretKey: Array.from(keypair.secretKey) }), /array/],
    ];
    for (const [name, content, reason] of files) {
      const path = join(tmp, name);
      writeFileSync(path, content, { mode: 0o600 });
      const message = refusal(path);
      expect(message).toMatch(reason);
      expectNoLeak(message, path);
      expectNoLeak(message, secret);
      expectNoLeak(message, numbers);
    }
    expect(refusal(tmp)).toMatch(/not a regular file/);
  });
});

describe('toUnits', () => {
  function formatted(units: bigint, decimals: number): string {
    if (decimals === 0) return units.toString();
    const digits = units.toString().padStart(decimals + 1, '0');
    return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  }

  it('converts exact decimal strings to units', () => {
    expect(toUnits('12.345678', 6)).toBe(12_345_678n);
    expect(toUnits('1.5', 9)).toBe(1_500_000_000n);
    expect(toUnits('0.000001', 6)).toBe(1n);
    expect(toUnits('7', 0)).toBe(7n);
    expect(toUnits('18446744073709.551615', 6)).toBe(2n ** 64n - 1n);
  });

  it('round-trips any formatted amount (with or without trailing zeros)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 96n }),
        fc.integer({ min: 0, max: 18 }),
        (units, decimals) => {
          const text = formatted(units, decimals);
          expect(toUnits(text, decimals)).toBe(units);
          const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
          expect(toUnits(trimmed, decimals)).toBe(units);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('refuses more fraction digits than the currency has', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 64n }),
        fc.integer({ min: 0, max: 18 }),
        fc.integer({ min: 0, max: 9 }),
        (units, decimals, extra) => {
          const text = formatted(units * 10n + BigInt(extra), decimals + 1);
          expect(() => toUnits(text, decimals)).toThrow(/fraction digits/);
        },
      ),
    );
  });

  it('refuses negatives and anything but plain decimals', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 2n ** 64n }),
        fc.integer({ min: 0, max: 9 }),
        (units, d) => {
          expect(() => toUnits(`-${formatted(units, d)}`, d)).toThrow(RangeError);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 18 }), (text, decimals) => {
        fc.pre(!/^\d+(\.\d+)?$/.test(text));
        expect(() => toUnits(text, decimals)).toThrow(RangeError);
      }),
    );
    for (const text of [
      '',
      '.5',
      '1.',
      '1e6',
      '+1',
      ' 1',
      '1 ',
      '1,000',
      '0x10',
      '١',
      'NaN',
      '1.2.3',
    ]) {
      expect(() => toUnits(text, 6)).toThrow(RangeError);
    }
    expect(() => toUnits('1', -1)).toThrow(RangeError);
    expect(() => toUnits('1', 1.5)).toThrow(RangeError);
    expect(() => toUnits('1'.repeat(101), 0)).toThrow(RangeError);
  });
});
