import type { CardRecord, Scope } from '../../core/index.js';
import type { CardDetails, CreateCardInput } from '../ops/cards.js';
import type { ListCardsQuery, Page } from '../ops/lists.js';

export type { CardDetails, CreateCardInput } from '../ops/cards.js';

/** Cards (contract section 7): issued on a vault, frozen, cancelled, revealed. */
export interface CardOperations {
  createCard(scope: Scope, input: CreateCardInput): Promise<CardRecord>;
  getCard(scope: Scope, cardId: string): Promise<CardRecord>;
  listCards(scope: Scope, query: ListCardsQuery): Promise<Page<CardRecord>>;
  setCardStatus(
    scope: Scope,
    cardId: string,
    status: 'active' | 'frozen' | 'cancelled',
  ): Promise<CardRecord>;
  /** The number and CVV: for Reveal Card Details only; never logged, never in an event. */
  revealCard(scope: Scope, cardId: string): Promise<CardDetails>;
}
