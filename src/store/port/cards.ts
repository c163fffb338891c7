import type { CardRecord, Metadata, ProcessorCardRef, Scope } from '../../core/index.js';
import type { MetadataChanges } from '../metadata-changes.js';
import type { Page, PageQuery } from './pages.js';

export interface ListCardsQuery extends PageQuery {
  readonly vaultId?: string | undefined;
  readonly status?: CardRecord['status'] | undefined;
}

export interface CreateCardInput {
  readonly vaultId: string;
  readonly cardholderName: string;
  readonly metadata: Metadata;
  readonly bin?: string;
  /** ISO 4217, checked at the edge; default USD (contract v1.2, section 16). */
  readonly billingCurrency?: string;
  /** The processor's card it answers for (contract v1.2, section 17). */
  readonly processorCard?: ProcessorCardRef | undefined;
}

/** What Update Card may change (contract v1.2, section 3 amendments). */
export interface CardChanges {
  readonly cardholderName?: string | undefined;
  readonly metadata?: MetadataChanges | undefined;
  /** Ties the card to a processor's card; null unties it (contract v1.2, section 17). */
  readonly processorCard?: ProcessorCardRef | null | undefined;
}

/** A card's secrets, for Reveal Card Details only; never logged, never in an event. */
export interface CardDetails {
  readonly cardId: string;
  readonly number: string;
  readonly cvv: string;
  readonly expMonth: number;
  readonly expYear: number;
}

/** How long a display token lives: long enough to load an iframe, too short to be kept. */
export const DISPLAY_TOKEN_TTL_MS = 60_000;

/** A token as the page receives it: `cdt_` and 43 base64url characters. */
export const DISPLAY_TOKEN_PATTERN = /^cdt_[A-Za-z0-9_-]{43}$/;

/** Origins one account and mode may register. */
export const DISPLAY_ORIGINS_MAX = 20;

export interface DisplayToken {
  readonly cardId: string;
  /** Shown once, to the caller that asked; never stored, never logged. */
  readonly token: string;
  readonly expiresAtMs: number;
}

/** What the page shows, and where it may be framed. */
export interface DisplayedCard {
  readonly details: CardDetails;
  readonly origins: readonly string[];
}

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
