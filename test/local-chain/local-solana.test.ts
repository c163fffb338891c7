/**
 * The local Solana endpoint through the real web3.js Connection and spl-token helpers, no mocks:
 * what the transfer worker does (SOL and USDC transfers, polling statuses, expiry by block
 * height, confirmTransaction over the websocket) must work exactly as against a cluster.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SendTransactionError,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';

let solana: LocalSolana;
let connection: Connection;

beforeAll(async () => {
  solana = await startLocalSolana({ slotIntervalMs: 0 });
  connection = solana.connection();
});

afterAll(async () => {
  await solana.close();
});

async function signed(instructions: TransactionInstruction[], blockhash?: string) {
  const latest = await connection.getLatestBlockhash();
  const tx = new Transaction({
    feePayer: solana.treasury.publicKey,
    blockhash: blockhash ?? latest.blockhash,
    lastValidBlockHeight: latest.lastValidBlockHeight,
  }).add(...instructions);
  tx.sign(solana.treasury);
  return { bytes: tx.serialize(), lastValidBlockHeight: latest.lastValidBlockHeight };
}

/** Polls getSignatureStatuses the way the worker does, until the signature has a status. */
async function settled(signature: string) {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const { value } = await connection.getSignatureStatuses([signature], {
      searchTransactionHistory: true,
    });
    const status = value[0];
    if (
      status != null &&
      (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')
    ) {
      return status;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no status for ${signature}`);
}

function usdcTransfer(owner: PublicKey, units: bigint): TransactionInstruction[] {
  const payer = solana.treasury.publicKey;
  const destination = getAssociatedTokenAddressSync(solana.usdcMint, owner);
  return [
    createAssociatedTokenAccountIdempotentInstruction(payer, destination, owner, solana.usdcMint),
    createTransferCheckedInstruction(
      solana.treasuryUsdcAccount,
      solana.usdcMint,
      destination,
      payer,
      units,
      solana.usdcDecimals,
    ),
  ];
}

describe('local Solana JSON-RPC endpoint', () => {
  it('answers the cluster-level methods', async () => {
    expect((await connection.getVersion())['solana-core']).toBe('1.18.0');
    expect(typeof (await connection.getGenesisHash())).toBe('string');
    expect(await connection.getSlot()).toBeGreaterThan(0);
    const epoch = await connection.getEpochInfo();
    expect(epoch.absoluteSlot).toBe(await connection.getSlot());
    expect(await connection.getMinimumBalanceForRentExemption(0)).toBe(890_880);
    const response = await fetch(`${solana.url}/health`);
    expect(await response.text()).toBe('ok');
  });

  it('starts with a funded treasury and a 6-decimal USDC mint', async () => {
    expect(await connection.getBalance(solana.treasury.publicKey)).toBe(1_000 * LAMPORTS_PER_SOL);
    const mint = await getMint(connection, solana.usdcMint);
    expect(mint.decimals).toBe(6);
    expect(mint.mintAuthority?.equals(solana.usdcMintAuthority.publicKey)).toBe(true);
    const account = await getAccount(connection, solana.treasuryUsdcAccount);
    expect(account.amount).toBe(1_000_000_000_000n);
    const balance = await connection.getTokenAccountBalance(solana.treasuryUsdcAccount);
    expect(balance.value).toMatchObject({ amount: '1000000000000', uiAmountString: '1000000' });
  });

  it('reads several accounts at once, and prices a message', async () => {
    const missing = Keypair.generate().publicKey;
    const accounts = await connection.getMultipleAccountsInfo([
      solana.treasury.publicKey,
      missing,
      solana.usdcMint,
    ]);
    expect(accounts[0]?.lamports).toBe(await connection.getBalance(solana.treasury.publicKey));
    expect(accounts[1]).toBeNull();
    expect(accounts[2]?.data.length).toBe(82);
    const latest = await connection.getLatestBlockhash();
    const message = new Transaction({ feePayer: solana.treasury.publicKey, ...latest })
      .add(
        SystemProgram.transfer({
          fromPubkey: solana.treasury.publicKey,
          toPubkey: missing,
          lamports: 1,
        }),
      )
      .compileMessage();
    // One signature at the default 5,000 lamports.
    expect((await connection.getFeeForMessage(message)).value).toBe(5_000);
  });

  it('sends SOL: exact amount received, treasury pays amount + fee', async () => {
    const recipient = Keypair.generate().publicKey;
    const before = await connection.getBalance(solana.treasury.publicKey);
    const { bytes } = await signed([
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: recipient,
        lamports: 1_500_000_000,
      }),
    ]);
    const signature = await connection.sendRawTransaction(bytes);
    const status = await settled(signature);
    expect(status.err).toBeNull();
    expect(await connection.getBalance(recipient)).toBe(1_500_000_000);
    const after = await connection.getBalance(solana.treasury.publicKey);
    expect(before - after).toBe(1_500_000_000 + 5_000);
  });

  it('sends USDC to a new owner (creating the ATA), then again to the existing ATA', async () => {
    const owner = Keypair.generate().publicKey;
    const ata = getAssociatedTokenAddressSync(solana.usdcMint, owner);
    expect(await connection.getAccountInfo(ata)).toBeNull();

    const first = await signed(usdcTransfer(owner, 12_345_678n));
    expect((await settled(await connection.sendRawTransaction(first.bytes))).err).toBeNull();
    const balance = await connection.getTokenAccountBalance(ata);
    expect(balance.value.amount).toBe('12345678');
    expect(balance.value.uiAmountString).toBe('12.345678');
    expect(balance.value.decimals).toBe(6);
    expect((await connection.getAccountInfo(ata))?.data.length).toBe(165);

    const second = await signed(usdcTransfer(owner, 12_345_678n));
    expect((await settled(await connection.sendRawTransaction(second.bytes))).err).toBeNull();
    expect((await connection.getTokenAccountBalance(ata)).value.uiAmountString).toBe('24.691356');
    expect((await getAccount(connection, ata)).owner.equals(owner)).toBe(true);
    const treasury = await getAccount(connection, solana.treasuryUsdcAccount);
    expect(treasury.amount).toBe(1_000_000_000_000n - 24_691_356n);
  });

  it('refuses a failing transaction at preflight; skipPreflight lands it with err', async () => {
    const recipient = Keypair.generate().publicKey;
    const before = await connection.getBalance(solana.treasury.publicKey);
    const { bytes } = await signed([
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: recipient,
        lamports: before + 1,
      }),
    ]);
    const refused = await connection.sendRawTransaction(bytes).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SendTransactionError);
    expect((refused as SendTransactionError).message).toContain('Simulation failed');
    expect(await connection.getBalance(solana.treasury.publicKey)).toBe(before);

    const signature = await connection.sendRawTransaction(bytes, { skipPreflight: true });
    const status = await settled(signature);
    expect(status.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await connection.getBalance(recipient)).toBe(0);
    // A failed transaction still pays its fee, as on a cluster.
    expect(await connection.getBalance(solana.treasury.publicKey)).toBe(before - 5_000);
  });

  it('refuses a token transfer beyond the balance', async () => {
    const owner = Keypair.generate().publicKey;
    const { bytes } = await signed(usdcTransfer(owner, 2_000_000_000_000n));
    const refused = await connection.sendRawTransaction(bytes).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SendTransactionError);
    const logs = await (refused as SendTransactionError).getLogs(connection);
    expect(logs.join('\n')).toContain('insufficient funds');
    const treasury = await getAccount(connection, solana.treasuryUsdcAccount);
    expect(treasury.amount).toBeGreaterThan(0n);
    expect(
      await connection.getAccountInfo(getAssociatedTokenAddressSync(solana.usdcMint, owner)),
    ).toBeNull();
  });

  it('applies the same signed bytes once', async () => {
    const recipient = Keypair.generate().publicKey;
    const { bytes } = await signed([
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: recipient,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const first = await connection.sendRawTransaction(bytes);
    await settled(first);
    const again = await connection.sendRawTransaction(bytes);
    const skipping = await connection.sendRawTransaction(bytes, { skipPreflight: true });
    expect(again).toBe(first);
    expect(skipping).toBe(first);
    expect(await connection.getBalance(recipient)).toBe(LAMPORTS_PER_SOL);
  });

  it('never lands a transaction with a bad signature', async () => {
    const latest = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: solana.treasury.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    );
    tx.sign(solana.treasury);
    const bytes = tx.serialize();
    // The first signature starts after its one-byte count: corrupt it.
    bytes[1] = (bytes[1] ?? 0) ^ 0xff;
    await expect(connection.sendRawTransaction(bytes)).rejects.toThrow(/signature verification/);
    const signature = await connection.sendRawTransaction(bytes, { skipPreflight: true });
    const { value } = await connection.getSignatureStatuses([signature]);
    expect(value[0]).toBeNull();
  });

  it('expires blockhashes by block height', async () => {
    const { bytes, lastValidBlockHeight } = await signed([
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const height = await connection.getBlockHeight();
    expect(lastValidBlockHeight).toBeGreaterThan(height);
    await solana.advanceSlots(lastValidBlockHeight - height + 1);
    expect(await connection.getBlockHeight()).toBeGreaterThan(lastValidBlockHeight);

    const before = await connection.getBalance(solana.treasury.publicKey);
    await expect(connection.sendRawTransaction(bytes)).rejects.toThrow(/Blockhash not found/);
    const signature = await connection.sendRawTransaction(bytes, { skipPreflight: true });
    expect((await connection.getSignatureStatuses([signature])).value[0]).toBeNull();
    expect(await connection.getBalance(solana.treasury.publicKey)).toBe(before);
  });

  it('confirms with confirmTransaction (websocket signatureSubscribe)', async () => {
    const recipient = Keypair.generate().publicKey;
    const { bytes, lastValidBlockHeight } = await signed([
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: recipient,
        lamports: LAMPORTS_PER_SOL,
      }),
    ]);
    const signature = await connection.sendRawTransaction(bytes);
    const blockhash = (await connection.getLatestBlockhash()).blockhash;
    const result = await connection.confirmTransaction(
      { signature, blockhash, lastValidBlockHeight },
      'confirmed',
    );
    expect(result.value.err).toBeNull();
    expect(await connection.getBalance(recipient)).toBe(LAMPORTS_PER_SOL);
  });

  it('confirms a transaction sent after subscribing, with a plain Connection(url)', async () => {
    // web3.js derives the websocket from the URL (port + 1): the production path, unchanged.
    const plain = new Connection(solana.url, 'confirmed');
    const recipient = Keypair.generate().publicKey;
    const latest = await plain.getLatestBlockhash();
    const tx = new Transaction({ feePayer: solana.treasury.publicKey, ...latest }).add(
      SystemProgram.transfer({
        fromPubkey: solana.treasury.publicKey,
        toPubkey: recipient,
        lamports: LAMPORTS_PER_SOL,
      }),
    );
    tx.sign(solana.treasury);
    const signature = bs58.encode(tx.signature ?? new Uint8Array(64));
    const confirmed = plain.confirmTransaction({ signature, ...latest });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await plain.sendRawTransaction(tx.serialize())).toBe(signature);
    expect((await confirmed).value.err).toBeNull();
    expect(await plain.getBalance(recipient)).toBe(LAMPORTS_PER_SOL);
  });

  it('airdrops lamports with a finalized made-up signature', async () => {
    const recipient = Keypair.generate().publicKey;
    const signature = await connection.requestAirdrop(recipient, 2 * LAMPORTS_PER_SOL);
    expect((await settled(signature)).err).toBeNull();
    expect(await connection.getBalance(recipient)).toBe(2 * LAMPORTS_PER_SOL);
  });

  it('answers JSON-RPC errors and batches like a node', async () => {
    const post = async (body: unknown) => {
      const response = await fetch(solana.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return response.json();
    };
    expect(await post({ jsonrpc: '2.0', id: 1, method: 'nope', params: [] })).toMatchObject({
      id: 1,
      error: { code: -32601 },
    });
    expect(
      await post({ jsonrpc: '2.0', id: 2, method: 'getBalance', params: ['x'] }),
    ).toMatchObject({
      id: 2,
      error: { code: -32602 },
    });
    const batch = await post([
      { jsonrpc: '2.0', id: 'a', method: 'getHealth' },
      { jsonrpc: '2.0', id: 'b', method: 'getSlot' },
    ]);
    expect(batch).toMatchObject([
      { id: 'a', result: 'ok' },
      { id: 'b', result: await connection.getSlot() },
    ]);
    const big = await fetch(solana.url, { method: 'POST', body: 'x'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
  });
});
