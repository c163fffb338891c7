import { assert, type Scope } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import type { SqlQueryable } from '../sql/client.js';
import { recordSignedSend, type SendTable } from './signed-sends.js';
import type { ChainSend, PendingChainTransfer } from '../port/transfers.js';

/*
 * The Solana worker's side of external transfers: which transfers wait to be sent,
 * and the signed transaction of each, recorded before it is first sent.
 */

export { SIGNINGS_MAX } from './signed-sends.js';

/**
 * pendingChainTransfers: one read. Up to `batchMax` pending external transfers, oldest
 * first, with their recorded sends; those not yet signed in a (mode, currency) of `holdBack`
 * (keys `mode:currency`: short of reserves, so they wait) are left out, so that they neither
 * fill the batch nor keep the others from being read.
 */
export async function pendingChainTransfers(
  tx: SqlQueryable,
  batchMax: number,
  holdBack: readonly string[] = [],
): Promise<PendingChainTransfer[]> {
  assert(Number.isInteger(batchMax) && batchMax > 0 && batchMax <= 1000, 'a bounded batch');
  assert(holdBack.length <= 100, 'a bounded list of pairs');
  const { rows } = await tx.query<{
    id: string;
    mode: Scope['mode'];
    currency: string;
    amount: string;
    address: string;
    memo: string | null;
    signed_transaction: string | null;
    signature: string | null;
    last_valid_block_height: string | null;
    signings: number | null;
  }>(
    `SELECT t.id, t.mode, t.currency, t.amount::text AS amount, t.address, t.memo,
            s.signed_transaction, s.signature, s.last_valid_block_height::text AS last_valid_block_height, s.signings
     FROM transfers t LEFT JOIN transfer_chain_sends s ON s.transfer_id = t.id
     WHERE t.kind = 'external' AND t.status = 'pending'
       AND NOT (s.transfer_id IS NULL AND t.mode || ':' || t.currency = ANY($2::text[]))
     ORDER BY t.id LIMIT $1`,
    [batchMax, holdBack],
  );
  return rows.map((row) => ({
    transferId: row.id,
    mode: row.mode,
    currency: row.currency,
    amount: row.amount,
    address: row.address,
    memo: row.memo,
    send:
      row.signed_transaction === null || row.signature === null
        ? null
        : {
            signedTransaction: row.signed_transaction,
            signature: row.signature,
            lastValidBlockHeight: Number(row.last_valid_block_height),
            signings: row.signings ?? 1,
          },
  }));
}

/**
 * recordChainSend: one statement. Records (or, after an expired blockhash, replaces) the
 * signed transaction of a pending transfer. `previousSignature` is the signature being
 * replaced, null for the first signing: a replacement whose previous signature no longer
 * matches (another worker re-signed first) changes nothing and answers false, so two workers
 * never both send.
 */
export async function recordChainSend(
  ctx: StoreContext,
  tx: SqlQueryable,
  transferId: string,
  send: Omit<ChainSend, 'signings'>,
  previousSignature: string | null,
): Promise<boolean> {
  const at = new Date(ctx.clock());
  return recordSignedSend(tx, TRANSFER_SENDS, transferId, send, previousSignature, at);
}

const TRANSFER_SENDS: SendTable = {
  table: 'transfer_chain_sends',
  key: 'transfer_id',
  needs: "transfers WHERE id = $1 AND status = 'pending'",
  replaceWhen: '',
};
