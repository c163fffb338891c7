/**
 * The local endpoint's history methods through the real web3.js Connection:
 * getSignaturesForAddress (newest first, limit, before, until, finalized) and getTransaction
 * (json and base64, balances, fee, the failed transaction's error), and the history's bound.
 */
import { Keypair, SystemProgram, Transaction, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionHistory } from '../../src/local-chain/history.js';
import { startLocalSolana, type LocalSolana } from '../../src/local-chain/index.js';

let solana: LocalSolana;

beforeAll(async () => {
  solana = await startLocalSolana({ slotIntervalMs: 0 });
});

afterAll(async () => {
  await solana.close();
});

async function pay(to: Keypair['publicKey'], lamports: number, skipPreflight = false) {
  const connection = solana.connection();
  const latest = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: solana.treasury.publicKey, ...latest }).add(
    SystemProgram.transfer({ fromPubkey: solana.treasury.publicKey, toPubkey: to, lamports }),
  );
  tx.sign(solana.treasury);
  return connection.sendRawTransaction(tx.serialize(), { skipPreflight });
}

describe('local Solana history', () => {
  it("lists an address's signatures newest first, by pages, finalized", async () => {
    const connection = solana.connection('finalized');
    const to = Keypair.generate().publicKey;
    const sent: string[] = [];
    for (let i = 1; i <= 5; i += 1) sent.push(await pay(to, i * 1_000_000));
    const all = await connection.getSignaturesForAddress(to, {}, 'finalized');
    expect(all.map((s) => s.signature)).toEqual([...sent].reverse());
    expect(all.every((s) => s.confirmationStatus === 'finalized' && s.err === null)).toBe(true);
    expect(all[0]?.slot).toBeGreaterThan(all[4]?.slot ?? Infinity);
    const page = await connection.getSignaturesForAddress(to, { limit: 2, before: sent[3] ?? '' });
    expect(page.map((s) => s.signature)).toEqual([sent[2], sent[1]]);
    const since = await connection.getSignaturesForAddress(to, { until: sent[2] ?? '' });
    expect(since.map((s) => s.signature)).toEqual([sent[4], sent[3]]);
    expect(await connection.getSignaturesForAddress(Keypair.generate().publicKey)).toEqual([]);
    await expect(connection.getSignaturesForAddress(to, { limit: 1001 })).rejects.toThrow(/limit/);
  });

  it('reads a transaction in json and base64, with balances and fee', async () => {
    const connection = solana.connection('finalized');
    const to = Keypair.generate().publicKey;
    const signature = await pay(to, 2_500_000_000);
    const read = await connection.getTransaction(signature, {
      commitment: 'finalized',
      maxSupportedTransactionVersion: 0,
    });
    expect(read?.meta?.err).toBeNull();
    expect(read?.meta?.fee).toBe(5_000);
    const keys = read?.transaction.message.staticAccountKeys.map((k) => k.toBase58()) ?? [];
    const index = keys.indexOf(to.toBase58());
    expect(read?.meta?.preBalances[index]).toBe(0);
    expect(read?.meta?.postBalances[index]).toBe(2_500_000_000);
    const payer = keys.indexOf(solana.treasury.publicKey.toBase58());
    expect((read?.meta?.preBalances[payer] ?? 0) - (read?.meta?.postBalances[payer] ?? 0)).toBe(
      2_500_005_000,
    );
    const [instruction] = read?.transaction.message.compiledInstructions ?? [];
    expect(keys[instruction?.programIdIndex ?? -1]).toBe(SystemProgram.programId.toBase58());
    const raw = await fetch(solana.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'getTransaction',
        params: [signature, { encoding: 'base64', commitment: 'finalized' }],
      }),
    });
    const body = (await raw.json()) as { result: { transaction: [string, string] } };
    const decoded = VersionedTransaction.deserialize(
      Buffer.from(body.result.transaction[0], 'base64'),
    );
    expect(decoded.message.staticAccountKeys.map((k) => k.toBase58())).toEqual(keys);
    // 64 bytes: a well-formed signature that never landed.
    const unknown = Keypair.generate().secretKey;
    expect(
      await connection.getTransaction(bs58.encode(unknown), { maxSupportedTransactionVersion: 0 }),
    ).toBeNull();
  });

  it('keeps a failed transaction with its error, and an unknown one reads as null', async () => {
    const connection = solana.connection('finalized');
    const poor = Keypair.generate();
    const signature = await pay(poor.publicKey, 1, true);
    const read = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(read?.meta?.err).not.toBeNull();
    const listed = await connection.getSignaturesForAddress(poor.publicKey);
    expect(listed[0]?.err).not.toBeNull();
    const unknown = Keypair.generate().publicKey;
    expect(await connection.getSignaturesForAddress(unknown)).toEqual([]);
  });

  it('forgets the oldest transactions past its bound, from every index', () => {
    const history = new TransactionHistory(2);
    const landed = (signature: string, keys: string[]) => ({
      signature,
      slot: 1,
      blockTime: 0,
      bytes: Buffer.alloc(0),
      accountKeys: keys,
      err: null,
      fee: 0,
      preBalances: [],
      postBalances: [],
      logMessages: [],
    });
    history.record(landed('a', ['x', 'y']));
    history.record(landed('b', ['x']));
    history.record(landed('c', ['y']));
    expect(history.size).toBe(2);
    expect(history.get('a')).toBeNull();
    expect(history.signaturesFor('x', { limit: 10 }).map((t) => t.signature)).toEqual(['b']);
    expect(history.signaturesFor('y', { limit: 10 }).map((t) => t.signature)).toEqual(['c']);
  });
});
