import { SpendgateError, type Metadata, type Scope } from '../../core/index.js';
import { vaultDataKey, type StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';

/*
 * Transaction metadata at rest (contract section 14): a transaction's metadata is encrypted
 * under its vault's data key, bound to the transaction's id, so the database alone never
 * reveals it and a ciphertext moved to another row does not decrypt. Only the account that
 * owns the transaction or its counterparty's account may read it.
 */

const aad = (transactionId: string) => `transaction-metadata:${transactionId}`;

/** Encrypts and attaches metadata to a transaction just written; nothing for none or `{}`. */
export async function sealMetadata(
  ctx: StoreContext,
  tx: SqlQueryable,
  vaultId: string,
  transactionId: string,
  metadata: Metadata | null,
): Promise<void> {
  if (metadata === null || Object.keys(metadata).length === 0) return;
  const token = ctx.keyring.encrypt(
    vaultId,
    await vaultDataKey(tx, vaultId),
    JSON.stringify(metadata),
    aad(transactionId),
  );
  await tx.query('UPDATE transactions SET metadata_enc = $2 WHERE id = $1', [transactionId, token]);
}

/**
 * readTransactionMetadata: one read.
 * In: scope, transaction id.  Out: the decrypted metadata ({} when there is none).
 * Fails: transaction_not_found when the scope is neither the owner nor the counterparty (so
 *   that existence is not leaked).
 */
export async function readTransactionMetadata(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  transactionId: string,
): Promise<Metadata> {
  const { rows } = await tx.query<{ vault_id: string; metadata_enc: string | null }>(
    `SELECT vault_id, metadata_enc FROM transactions
     WHERE id = $1 AND mode = $2 AND (account_id = $3 OR counterparty_account_id = $3)`,
    [transactionId, scope.mode, scope.accountId],
  );
  const row = rows[0];
  if (row === undefined) {
    throw new SpendgateError(
      'transaction_not_found',
      `No transaction ${transactionId.slice(0, 64)} exists.`,
      'id',
    );
  }
  if (row.metadata_enc === null) return {};
  const plaintext = ctx.keyring.decrypt(
    row.vault_id,
    await vaultDataKey(tx, row.vault_id),
    row.metadata_enc,
    aad(transactionId),
  );
  return JSON.parse(plaintext) as Metadata;
}
