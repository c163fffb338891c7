import type { CardRecord, Scope } from '../../core/index.js';
import type { DisplayedCard, DisplayToken } from '../ops/card-display.js';
import type { CardChanges, CardDetails, CreateCardInput } from '../ops/cards.js';
import type { ListCardsQuery, Page } from '../ops/lists.js';

export type { CardChanges, CardDetails, CreateCardInput } from '../ops/cards.js';
export {
  DISPLAY_ORIGINS_MAX,
  DISPLAY_TOKEN_PATTERN,
  DISPLAY_TOKEN_TTL_MS,
  type DisplayedCard,
  type DisplayToken,
} from '../ops/card-display.js';

/** Cards (contract section 7): issued on a vault, frozen, cancelled, revealed. */
export interface CardOperations {
  createCard(scope: Scope, input: CreateCardInput): Promise<CardRecord>;
  getCard(scope: Scope, cardId: string): Promise<CardRecord>;
  updateCard(scope: Scope, cardId: string, changes: CardChanges): Promise<CardRecord>;
  listCards(scope: Scope, query: ListCardsQuery): Promise<Page<CardRecord>>;
  setCardStatus(
    scope: Scope,
    cardId: string,
    status: 'active' | 'frozen' | 'cancelled',
  ): Promise<CardRecord>;
  /** The number and CVV: for Reveal Card Details only; never logged, never in an event. */
  revealCard(scope: Scope, cardId: string): Promise<CardDetails>;
  /** A single-use token for the card display page (issue 18), bound to the card and scope. */
  createDisplayToken(scope: Scope, cardId: string): Promise<DisplayToken>;
  /** Spends a display token: the card it shows, or null (unknown, spent or expired). */
  spendDisplayToken(token: string): Promise<DisplayedCard | null>;
  /** The origins the account lets frame the card display page, in this mode. */
  displayOrigins(scope: Scope): Promise<string[]>;
  setDisplayOrigins(scope: Scope, origins: readonly string[]): Promise<string[]>;
}
