import type { AuthorizationOutcome, Merchant } from '../../core/index.js';
import type { Processor } from '../../store/store.js';

/*
 * What a processor asked for, as one of the operations of contract v1.2 section 16, before
 * spendgate has done anything with it. An adapter (stripe.ts, lithic.ts, marqeta.ts) only
 * reads its processor's message into one of these and writes the result back in its
 * processor's format; the dispatcher (dispatch.ts) runs it through the same store operations,
 * idempotency, events and ledger as the REST routes. See README.md in this folder.
 */

/** An amount as processors send it: integer minor units of an ISO 4217 currency. */
export interface MinorAmount {
  /** Whole minor units (cents for USD, yen for JPY), at least 0: "1234" is 12.34 USD. */
  readonly minor: bigint | string;
  /** ISO 4217 alphabetic code, any case (Stripe sends "usd"). */
  readonly currency: string;
}

/** The connection a message came in on: the scope it acts for and its card namespace. */
export interface ProcessorSource {
  readonly processor: Processor;
  readonly connectionId: string;
  readonly accountId: string;
  readonly mode: 'test' | 'live';
}

/** The fields of a message that asks (authorize) or tells a decision (advice). */
export interface AskingFields {
  /** The processor's card id, tied with processorCard {connectionId, cardId}. */
  readonly processorCardId: string;
  readonly amount: MinorAmount;
  readonly merchant: Merchant;
  /** The network's id of this authorization: its idempotency key, and how later messages find it. */
  readonly networkTransactionId: string;
  /** What the merchant charged in its own currency, when it differs from the billing amount. */
  readonly merchantAmount?: MinorAmount | undefined;
  /** The processor lets spendgate approve less than asked (Stripe's is_amount_controllable). */
  readonly partialApprovalAllowed?: boolean | undefined;
}

/** A later message about an authorization: found by the network id it was decided under. */
export interface FollowingFields {
  readonly authorizationNetworkId: string;
  /**
   * The processor's id of this message (a Stripe event or transaction id, a Marqeta token):
   * its idempotency key where section 16 has no network id of its own (capture, reversal).
   */
  readonly messageId: string;
}

export type ProcessorOperation =
  | ({ readonly kind: 'authorize' } & AskingFields)
  | ({
      readonly kind: 'advice';
      /** What the network decided on spendgate's behalf. */
      readonly approved: boolean;
      /** Why, in the processor's words (bounded by the dispatcher). */
      readonly reason: string;
    } & AskingFields)
  | ({
      readonly kind: 'increment';
      /** The increment alone (not the new total). */
      readonly amount: MinorAmount;
      /** The increment's own network id: its idempotency key (messageId if it has none). */
      readonly networkTransactionId: string;
      /**
       * The network already approved it (its stand-in, the processor's timeout setting): an
       * advice, recorded as approved whatever the balance, not decided.
       */
      readonly advice?: boolean | undefined;
    } & FollowingFields)
  | ({
      readonly kind: 'capture';
      /** null: the whole remaining hold. May exceed the hold (tips, fuel). */
      readonly amount: MinorAmount | null;
      /**
       * True: the last capture, the rest of the hold is released. False: one of several
       * clearings of the authorization (a split shipment, a multi-clearing), the rest held.
       */
      readonly final: boolean;
      /**
       * What a capture of an authorization spendgate does not know becomes: a force capture
       * of this card at this merchant (money the network moved is never refused). The
       * amount must then be given.
       */
      readonly processorCardId: string;
      readonly merchant: Merchant;
    } & FollowingFields)
  | ({
      readonly kind: 'reverse';
      /** null: all of the remaining hold. */
      readonly amount: MinorAmount | null;
      /** The processor expired the hold (recorded as expired rather than reversed). */
      readonly expired?: boolean | undefined;
    } & FollowingFields)
  | {
      readonly kind: 'force_capture';
      readonly processorCardId: string;
      readonly amount: MinorAmount;
      readonly merchant: Merchant;
      readonly networkTransactionId: string;
    }
  | {
      readonly kind: 'refund';
      readonly processorCardId: string;
      readonly amount: MinorAmount;
      readonly merchant: Merchant;
      readonly networkTransactionId: string;
      /** The authorization the refund credits, by its network id, when the processor says. */
      readonly authorizationNetworkId?: string | undefined;
    };

export type ProcessorOperationKind = ProcessorOperation['kind'];

/**
 * What the dispatcher answers: a decision (authorize, advice, increment) or a posting
 * (capture, reverse, force capture, refund). `replayed`: a repeat of a message already
 * recorded, answered what was recorded.
 */
export type ProcessorResult =
  | {
      readonly kind: 'decision';
      readonly outcome: AuthorizationOutcome;
      /**
       * The approved amount in the message's currency and minor units (less than asked for a
       * partial approval); null when declined.
       */
      readonly approvedMinor: bigint | null;
      readonly replayed: boolean;
    }
  | {
      readonly kind: 'posting';
      /** The transaction the posting wrote or changed. */
      readonly transactionId: string;
      readonly replayed: boolean;
    };
