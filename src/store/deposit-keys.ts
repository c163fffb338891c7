import { createHmac, createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { assert } from '../core/index.js';
import { newId } from '../ids.js';
import type { StoreContext } from './context.js';
import type { Keyring } from './secrets/index.js';
import type { SqlQueryable } from './sql/client.js';

/*
 * The vaults' deposit keys (issue 15). One random seed per installation, made once by the
 * first process that needs it and stored only encrypted under the master key (deposit_seed,
 * migration 0015; `spendgate keys rotate-master` re-encrypts it). A vault's keypair is the
 * ed25519 keypair whose 32-byte seed is the first half of HMAC-SHA512(installation seed, vault
 * id): the service can sign for every deposit address, the addresses never change when the
 * master key does, and nothing per vault is secret at rest. The seed and the derived key seeds
 * never reach a log, an error or an event: only the public address leaves this file.
 */

export const DEPOSIT_SEED_BYTES = 32;
export const KEY_SEED_BYTES = 32;

export function depositSeedAad(id: string): string {
  return `deposit-seed:${id}`;
}

/** The seed decrypted once per keyring (so per process), kept off every object a log prints. */
// eslint-disable-next-line no-restricted-syntax -- per keyring, and on no object a log prints
const seeds = new WeakMap<Keyring, Buffer>();

/**
 * The installation's deposit seed: read and decrypted, or made when there is none yet. Two
 * processes making it at once: the unique index on a constant keeps the first, and the second
 * reads it after its own insert did nothing.
 */
export async function depositSeed(ctx: StoreContext, tx: SqlQueryable): Promise<Buffer> {
  const known = seeds.get(ctx.keyring);
  if (known !== undefined) return known;
  const read = async () =>
    (await tx.query<{ id: string; seed_enc: string }>('SELECT id, seed_enc FROM deposit_seed'))
      .rows[0];
  let row = await read();
  if (row === undefined) {
    const id = newId('deposit', ctx.clock());
    const fresh = randomBytes(DEPOSIT_SEED_BYTES);
    await tx.query(
      `INSERT INTO deposit_seed (id, seed_enc, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [
        id,
        ctx.keyring.encryptSecret(fresh.toString('hex'), depositSeedAad(id)),
        new Date(ctx.clock()),
      ],
    );
    fresh.fill(0);
    row = await read();
  }
  assert(row !== undefined, 'the deposit seed exists once made');
  const seed = Buffer.from(ctx.keyring.decryptSecret(row.seed_enc, depositSeedAad(row.id)), 'hex');
  assert(seed.length === DEPOSIT_SEED_BYTES, 'the deposit seed is 32 bytes');
  seeds.set(ctx.keyring, seed);
  return seed;
}

/** The 32-byte ed25519 seed of a vault's deposit keypair (Keypair.fromSeed). Secret. */
export function vaultKeySeed(seed: Buffer, vaultId: string): Buffer {
  assert(seed.length === DEPOSIT_SEED_BYTES, 'a deposit seed is 32 bytes');
  return createHmac('sha512', seed).update(vaultId, 'utf8').digest().subarray(0, KEY_SEED_BYTES);
}

/** PKCS#8 DER of an ed25519 private key, before its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** SPKI DER of an ed25519 public key, before its 32 bytes. */
const ED25519_SPKI_PREFIX_BYTES = 12;

/** The Solana address (base58 ed25519 public key) of a key seed: what Keypair.fromSeed gives. */
export function addressOfKeySeed(keySeed: Buffer): string {
  assert(keySeed.length === KEY_SEED_BYTES, 'a key seed is 32 bytes');
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, keySeed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return bs58.encode(spki.subarray(ED25519_SPKI_PREFIX_BYTES));
}

/** A vault's deposit address. */
export async function depositAddressOf(
  ctx: StoreContext,
  tx: SqlQueryable,
  vaultId: string,
): Promise<string> {
  const keySeed = vaultKeySeed(await depositSeed(ctx, tx), vaultId);
  try {
    return addressOfKeySeed(keySeed);
  } finally {
    keySeed.fill(0);
  }
}
