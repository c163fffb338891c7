import { randomBytes } from 'node:crypto';
import { assert, SpendgateError, type Scope } from '../../core/index.js';
import type { StoreContext } from '../context.js';
import { hashApiKey } from '../secrets/index.js';
import type { SqlQueryable } from '../sql/client.js';
import { oneRow } from '../sql/one-row.js';
import { revealCard } from './cards.js';
import {
  DISPLAY_ORIGINS_MAX,
  DISPLAY_TOKEN_PATTERN,
  DISPLAY_TOKEN_TTL_MS,
  type DisplayedCard,
  type DisplayToken,
} from '../port/cards.js';

/*
 * Hosted card display (issue 18): single-use tokens that let the page GET /card-display show
 * one card's number, expiry and CVV, and the origins an account lets frame that page. The
 * number passes from this store to the page alone, never through the customer's servers.
 */

/** Random bytes in a token: 32 bytes, 256 bits, beyond any guessing. */
const DISPLAY_TOKEN_RANDOM_BYTES = 32;

/**
 * A token is stored as its SHA-256 alone, so that the table never holds one usable token. As
 * for API keys (secrets/api-key-hash.ts), an unsalted hash suffices: 256 random bits leave
 * nothing to guess, and the same hash lets the spend find its row through the primary key.
 */
function tokenHash(token: string): string {
  return hashApiKey(token);
}

/**
 * createDisplayToken: one statement after a read (the caller's transaction also spends the
 * two-factor code, if any).
 * In: scope, cardId.  Out: a new token bound to the card, its account and mode, and its expiry.
 * Writes: card_display_tokens (the token's hash).
 * Fails: card_not_found (another account's or mode's card too); card_cancelled.
 */
export async function createDisplayToken(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  cardId: string,
): Promise<DisplayToken> {
  const nowMs = ctx.clock();
  const { rows } = await tx.query<{ id: string; status: string }>(
    'SELECT id, status FROM cards WHERE id = $1 AND account_id = $2 AND mode = $3',
    [cardId, scope.accountId, scope.mode],
  );
  const card = rows[0];
  if (card === undefined)
    throw new SpendgateError('card_not_found', `No card ${cardId.slice(0, 64)} exists.`, 'id');
  if (card.status === 'cancelled')
    throw new SpendgateError('card_cancelled', `Card ${card.id} is cancelled.`, 'id');
  const token = `cdt_${randomBytes(DISPLAY_TOKEN_RANDOM_BYTES).toString('base64url')}`;
  assert(DISPLAY_TOKEN_PATTERN.test(token), 'a token has the form the page accepts');
  const expiresAtMs = nowMs + DISPLAY_TOKEN_TTL_MS;
  await tx.query(
    `INSERT INTO card_display_tokens (token_sha256, card_id, account_id, mode, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      tokenHash(token),
      card.id,
      scope.accountId,
      scope.mode,
      new Date(nowMs),
      new Date(expiresAtMs),
    ],
  );
  return { cardId: card.id, token, expiresAtMs };
}

/**
 * spendDisplayToken: one transaction.
 * In: a token from the page's query.  Out: the card's details and the origins its account
 *   lets frame the page; null for a token unknown, spent or expired (the page tells none of
 *   these apart, so that it confirms nothing to a guesser).
 * Writes: card_display_tokens.used_at, by the one statement that reads the token, so that of
 *   two loads at once exactly one shows the card.
 * Fails: card_cancelled (cancelled since the token was made: nothing is written, and the
 *   token can show nothing, ever).
 */
export async function spendDisplayToken(
  ctx: StoreContext,
  tx: SqlQueryable,
  token: string,
): Promise<DisplayedCard | null> {
  if (!DISPLAY_TOKEN_PATTERN.test(token)) return null;
  const now = new Date(ctx.clock());
  const { rows } = await tx.query<{ card_id: string; account_id: string; mode: 'test' | 'live' }>(
    `UPDATE card_display_tokens SET used_at = $2
      WHERE token_sha256 = $1 AND used_at IS NULL AND expires_at > $2
      RETURNING card_id, account_id, mode`,
    [tokenHash(token), now],
  );
  assert(rows.length <= 1, 'a token hash names at most one row');
  const spent = rows[0];
  if (spent === undefined) return null;
  const scope: Scope = { accountId: spent.account_id, mode: spent.mode };
  const details = await revealCard(ctx, tx, scope, spent.card_id);
  return { details, origins: await displayOrigins(tx, scope) };
}

/**
 * displayOrigins: one read. In: scope. Out: the origins the account registered for its mode,
 * in the order given; none when it registered none.
 */
export async function displayOrigins(tx: SqlQueryable, scope: Scope): Promise<string[]> {
  const { rows } = await tx.query<{ origins: string[] }>(
    'SELECT origins FROM card_display_origins WHERE account_id = $1 AND mode = $2',
    [scope.accountId, scope.mode],
  );
  const origins = rows[0]?.origins ?? [];
  assert(origins.length <= DISPLAY_ORIGINS_MAX, 'the origins are bounded');
  return origins;
}

/**
 * setDisplayOrigins: one statement.
 * In: scope, the origins, already checked and normalised by the caller (http/display-origins.ts).
 * Out: the origins stored. Writes: card_display_origins (replaces the account's list).
 * Fails: nothing (the list's bound is the caller's check, asserted here).
 */
export async function setDisplayOrigins(
  ctx: StoreContext,
  tx: SqlQueryable,
  scope: Scope,
  origins: readonly string[],
): Promise<string[]> {
  assert(origins.length <= DISPLAY_ORIGINS_MAX, 'the origins are bounded');
  assert(new Set(origins).size === origins.length, 'the origins are distinct');
  const { rows } = await tx.query<{ origins: string[] }>(
    `INSERT INTO card_display_origins (account_id, mode, origins, updated_at)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id, mode) DO UPDATE SET origins = EXCLUDED.origins, updated_at = EXCLUDED.updated_at
     RETURNING origins`,
    [scope.accountId, scope.mode, origins, new Date(ctx.clock())],
  );
  return oneRow(rows, 'the origins upsert').origins;
}
