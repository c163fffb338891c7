import { randomInt } from 'node:crypto';
import {
  assert,
  type CardRecord,
  presentCard,
  type Scope,
  SpendgateError,
} from '../../core/index.js';
import { newId } from '../../ids.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { assertVaultActive, lockVault, vaultDataKey, type StoreContext } from '../context.js';
import { appendEvent } from '../outbox.js';
import { applyMetadataChanges } from '../metadata-changes.js';
import { CARD_COLUMNS, cardFromRow, type CardRow } from '../rows.js';
import { tieProcessorCard } from './processors.js';
import type { CardChanges, CardDetails, CreateCardInput } from '../port/cards.js';

/** Card numbers: 16 digits, the issuer's BIN first, a Luhn check digit last. */
export const PAN_DIGITS = 16;
export const DEFAULT_BIN = '424242';
const CARD_VALIDITY_YEARS = 3;

export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let index = 0; index < payload.length; index++) {
    // Double every second digit counting from the right of the payload (the check digit's left).
    let digit = Number(payload[payload.length - 1 - index]);
    if (index % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(number: string): boolean {
  return (
    /^[0-9]{2,19}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === Number(number.slice(-1))
  );
}

export function generatePan(bin: string): string {
  assert(/^[0-9]{6,8}$/.test(bin), 'a BIN is 6 to 8 digits');
  let payload = bin;
  while (payload.length < PAN_DIGITS - 1) payload += String(randomInt(10));
  return `${payload}${luhnCheckDigit(payload)}`;
}

/** A card's billing currency when its creator names none: card networks bill most in USD. */
export const DEFAULT_BILLING_CURRENCY = 'USD';

/**
 * createCard: one transaction.
 * In: scope, vaultId, cardholderName, metadata, billingCurrency.  Out: the card (never its number or CVV).
 * Writes: cards (number and CVV encrypted under the vault's data key; the processor card tied),
 *   outbox (card.created).
 * Fails: vault_not_found, vault_frozen, vault_closed (contract section 7, Create Card);
 *   processor_not_found, parameter_invalid (a processor card tied to another card).
 */
export async function createCard(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  input: CreateCardInput,
): Promise<CardRecord> {
  const nowMs = ctx.clock();
  // Lock, so the vault cannot close between the check and the insert.
  const vault = await lockVault(tx, scope, input.vaultId);
  assertVaultActive(vault);
  const wrapped = await vaultDataKey(tx, vault.id);
  const id = newId('card', nowMs);
  const number = generatePan(input.bin ?? DEFAULT_BIN);
  const cvv = String(randomInt(1000)).padStart(3, '0');
  const issued = new Date(nowMs);
  const { rows } = await tx.query<CardRow>(
    `INSERT INTO cards (id, account_id, mode, vault_id, status, last4, exp_month, exp_year, cardholder_name,
                        number_enc, cvv_enc, metadata, billing_currency, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10, $11, $13, $12, $12)
     RETURNING ${CARD_COLUMNS}`,
    [
      id,
      scope.accountId,
      scope.mode,
      vault.id,
      number.slice(-4),
      issued.getUTCMonth() + 1,
      issued.getUTCFullYear() + CARD_VALIDITY_YEARS,
      input.cardholderName,
      ctx.keyring.encrypt(vault.id, wrapped, number, `card:${id}:number`),
      ctx.keyring.encrypt(vault.id, wrapped, cvv, `card:${id}:cvv`),
      JSON.stringify(input.metadata),
      issued,
      input.billingCurrency ?? DEFAULT_BILLING_CURRENCY,
    ],
  );
  const inserted = cardFromRow(oneRow(rows, 'the card INSERT'));
  const card =
    input.processorCard === undefined
      ? inserted
      : await tieProcessorCard(tx, scope, inserted.id, input.processorCard);
  await appendEvent(tx, scope, 'card.created', presentCard(card), nowMs);
  return card;
}

/**
 * setCardStatus (freeze, unfreeze, cancel): one transaction (contract section 9).
 * In: scope, cardId, target status.  Out: the card.
 * Writes: cards.status, outbox (card.frozen / card.unfrozen / card.cancelled) on a change.
 * Fails: card_not_found; card_cancelled for freeze or unfreeze of a cancelled card.
 */
export async function setCardStatus(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  target: 'active' | 'frozen' | 'cancelled',
): Promise<CardRecord> {
  const nowMs = ctx.clock();
  const card = await lockCard(tx, scope, cardId);
  if (card.status === target) return card;
  if (card.status === 'cancelled')
    throw new SpendgateError('card_cancelled', `Card ${card.id} is cancelled.`, 'id');
  const { rows: updated } = await tx.query<CardRow>(
    `UPDATE cards SET status = $2::text, updated_at = $3::timestamptz,
         cancelled_at = CASE WHEN $2::text = 'cancelled' THEN $3::timestamptz ELSE NULL END
     WHERE id = $1 RETURNING ${CARD_COLUMNS}`,
    [card.id, target, new Date(nowMs)],
  );
  const result = cardFromRow(updated[0] as CardRow);
  const event =
    target === 'active' ? 'card.unfrozen' : target === 'frozen' ? 'card.frozen' : 'card.cancelled';
  await appendEvent(tx, scope, event, presentCard(result), nowMs);
  return result;
}

/**
 * updateCard: one transaction.
 * In: scope, cardId, a new cardholder name and/or metadata changes (a key set to null is
 *   removed).  Out: the card.
 * Writes: cards.cardholder_name, cards.metadata, the processor card tied, outbox (card.updated).
 * Fails: card_not_found; card_cancelled (a cancelled card is never changed again);
 *   parameter_invalid (more than 50 metadata keys after the change; a processor card tied to
 *   another card); processor_not_found.
 */
export async function updateCard(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
  changes: CardChanges,
): Promise<CardRecord> {
  const nowMs = ctx.clock();
  const card = await lockCard(tx, scope, cardId);
  if (card.status === 'cancelled')
    throw new SpendgateError('card_cancelled', `Card ${card.id} is cancelled.`, 'id');
  const metadata = applyMetadataChanges(card.metadata, changes.metadata, 'card');
  const { rows } = await tx.query<CardRow>(
    `UPDATE cards SET cardholder_name = $2, metadata = $3, updated_at = $4 WHERE id = $1
     RETURNING ${CARD_COLUMNS}`,
    [
      card.id,
      changes.cardholderName ?? card.cardholderName,
      JSON.stringify(metadata),
      new Date(nowMs),
    ],
  );
  const changed = cardFromRow(oneRow(rows, 'the card UPDATE'));
  const updated =
    changes.processorCard === undefined
      ? changed
      : await tieProcessorCard(tx, scope, card.id, changes.processorCard);
  await appendEvent(tx, scope, 'card.updated', presentCard(updated), nowMs);
  return updated;
}

/** The card `cardId` of the caller, locked for the rest of the transaction. */
async function lockCard(tx: SqlQueryable, scope: Scope, cardId: string): Promise<CardRecord> {
  const { rows } = await tx.query<CardRow>(
    `SELECT ${CARD_COLUMNS} FROM cards WHERE id = $1 AND account_id = $2 AND mode = $3 FOR UPDATE`,
    [cardId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'id');
  return cardFromRow(row);
}

/**
 * revealCard: one read (the caller's transaction also spends the two-factor code, if any).
 * In: scope, cardId.  Out: the number and CVV, decrypted under the vault's data key.
 * Writes: nothing.
 * Fails: card_not_found; card_cancelled (a cancelled card's number serves no one, so it is
 *   never shown again).
 */
export async function revealCard(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
): Promise<CardDetails> {
  const { rows } = await tx.query<{
    id: string;
    vault_id: string;
    status: string;
    exp_month: number;
    exp_year: number;
    number_enc: string;
    cvv_enc: string;
  }>(
    `SELECT id, vault_id, status, exp_month, exp_year, number_enc, cvv_enc
     FROM cards WHERE id = $1 AND account_id = $2 AND mode = $3`,
    [cardId, scope.accountId, scope.mode],
  );
  const row = rows[0];
  if (row === undefined)
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'id');
  if (row.status === 'cancelled')
    throw new SpendgateError('card_cancelled', `Card ${row.id} is cancelled.`, 'id');
  const wrapped = await vaultDataKey(tx, row.vault_id);
  const details = {
    cardId: row.id,
    number: ctx.keyring.decrypt(row.vault_id, wrapped, row.number_enc, `card:${row.id}:number`),
    cvv: ctx.keyring.decrypt(row.vault_id, wrapped, row.cvv_enc, `card:${row.id}:cvv`),
    expMonth: row.exp_month,
    expYear: row.exp_year,
  };
  assert(isLuhnValid(details.number), 'a stored card number is Luhn-valid');
  return details;
}
