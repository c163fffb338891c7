import type { SqlQueryable } from '../sql/client.js';

/*
 * A signed Solana transaction recorded before it is first sent, for the two kinds of send the
 * workers make (an external transfer, transfer_chain_sends; a deposit's sweep, deposit_sweeps):
 * recorded once, and replaced only by the signer that holds the current signature, so that two
 * workers never both send, and a crash between the recording and the send resends the same
 * bytes.
 */

/** Signings of one send at most: each needs an expired blockhash, so this is generous. */
export const SIGNINGS_MAX = 100;

export interface SignedSend {
  readonly signedTransaction: string;
  readonly signature: string;
  readonly lastValidBlockHeight: number;
}

/** Where a kind of send is recorded. Constants of the code, never input: they become SQL. */
export interface SendTable {
  /** The table of sends, keyed by `key`. */
  readonly table: 'transfer_chain_sends' | 'deposit_sweeps';
  readonly key: 'transfer_id' | 'deposit_id';
  /** The row a first send needs, and the state it must be in (a pending transfer...). */
  readonly needs: string;
  /** What else a replacement needs of the send's row (a sweep not yet confirmed), or ''. */
  readonly replaceWhen: string;
}

/**
 * recordSignedSend: one statement. Records the first signing of `id` (`previousSignature`
 * null), or replaces the signing whose signature is `previousSignature` (its blockhash
 * expired). Out: whether it was recorded; false when another signer recorded first, the send
 * is no longer wanted, or it was re-signed SIGNINGS_MAX times.
 */
export async function recordSignedSend(
  tx: SqlQueryable,
  where: SendTable,
  id: string,
  send: SignedSend,
  previousSignature: string | null,
  at: Date,
): Promise<boolean> {
  const values = [id, send.signedTransaction, send.signature, send.lastValidBlockHeight, at];
  if (previousSignature === null) {
    const { rowCount } = await tx.query(
      `INSERT INTO ${where.table} (${where.key}, signed_transaction, signature, last_valid_block_height, signed_at)
       SELECT $1, $2, $3, $4, $5 FROM ${where.needs}
       ON CONFLICT (${where.key}) DO NOTHING`,
      values,
    );
    return rowCount === 1;
  }
  const { rowCount } = await tx.query(
    `UPDATE ${where.table} SET signed_transaction = $2, signature = $3,
       last_valid_block_height = $4, signed_at = $5, signings = signings + 1
     WHERE ${where.key} = $1 AND signature = $6 ${where.replaceWhen} AND signings < ${SIGNINGS_MAX}`,
    [...values, previousSignature],
  );
  return rowCount === 1;
}
