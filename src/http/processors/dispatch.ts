import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import {
  Decimal,
  presentTransaction,
  SpendgateError,
  type AuthorizationOutcome,
  type Scope,
  type TransactionRecord,
} from '../../core/index.js';
import type { AuthorizeSettings } from '../../config/env.js';
import type { Store, StoreOperations } from '../../store/store.js';
import { authorizeWithinBudget } from '../authorize-budget.js';
import { authorizeInputOf } from '../authorize-input.js';
import { errorBody } from '../error-body.js';
import type { StandInRecords } from '../stand-in-records.js';
import type { ProcessorLookups } from './lookups.js';
import { decimalOf, holdAmountOf, minorOf } from './minor-units.js';
import type {
  AskingFields,
  FollowingFields,
  ProcessorOperation,
  ProcessorResult,
  ProcessorSource,
} from './operation.js';

/** An advice's reason is the processor's words, kept on the record: bounded. */
const REASON_LENGTH_MAX = 200;

/**
 * The one way a processor's message reaches the ledger (contract v1.2, section 17): each
 * operation runs through the store operation its REST route runs (store.authorize within the
 * authorize budget, incrementAuthorization, capture, reverse, forceCapture, refund, advise),
 * so the decision, idempotency, events and ledger are the same code. Authorize, advice,
 * increment, force capture and refund are idempotent by their network ids, in the store;
 * capture and reverse, which the REST routes key by Idempotency-Key, are keyed here by the
 * processor's message id through the same idempotency records (Store.idempotent).
 * Refusals are thrown as SpendgateError; the adapter writes them in its processor's format.
 */
export class ProcessorDispatcher {
  readonly #standIn: StandInRecords;

  /**
   * `standIn`: the stand-in answers this door owes the ledger (stand-in-wiring.ts, which also
   * closes them with the server).
   */
  constructor(
    private readonly store: Store,
    private readonly settings: AuthorizeSettings,
    private readonly log: FastifyBaseLogger,
    standIn: StandInRecords,
    private readonly decisions: Counter<'outcome' | 'decline_code' | 'stand_in'> | null = null,
    /** The processor card ties kept in memory (lookups.ts); none: each read from PostgreSQL. */
    private readonly lookups: ProcessorLookups | null = null,
  ) {
    this.#standIn = standIn;
  }

  /**
   * Runs one operation a notification (a processor's event about a transaction) carries. A
   * release of a hold that holds nothing any more (our own expiry ran first, or a capture
   * completed it) has nothing left to do: null, so the processor is told it was taken rather
   * than sending the event again for days. Every other refusal stands.
   */
  async runNotification(
    source: ProcessorSource,
    operation: ProcessorOperation,
  ): Promise<ProcessorResult | null> {
    try {
      return await this.run(source, operation);
    } catch (error) {
      const nothingHeld =
        operation.kind === 'reverse' &&
        error instanceof SpendgateError &&
        error.code === 'transaction_not_pending';
      if (nothingHeld) return null;
      throw error;
    }
  }

  async run(source: ProcessorSource, operation: ProcessorOperation): Promise<ProcessorResult> {
    const scope: Scope = { accountId: source.accountId, mode: source.mode };
    switch (operation.kind) {
      case 'authorize':
        return this.#authorize(source, scope, operation);
      case 'advice':
        return this.#advise(source, scope, operation);
      case 'increment':
        return this.#increment(scope, operation);
      case 'capture':
        return this.#capture(source, scope, operation);
      case 'reverse':
        return this.#holdChange(source, scope, operation, async (operations, hold) => {
          const amount =
            operation.amount === null ? null : holdAmountOf(operation.amount, hold, 'amount');
          return operations.reverse(
            scope,
            hold.id,
            amount,
            operation.expired === true ? 'expired' : 'reversed',
          );
        });
      case 'force_capture':
        return this.#clearing(source, scope, operation, (operations, cardId) =>
          operations.forceCapture(scope, { ...clearingOf(operation), cardId }),
        );
      case 'refund':
        return this.#refund(source, scope, operation);
    }
  }

  /**
   * The authorize: the card maybe from the tie kept in memory, which the store checks against
   * the card row it locks (`processorCard`). A tie gone stale (the card re-tied or untied
   * since) is declined as an unknown card with nothing recorded; then the tie is read afresh
   * and, if it names a card, decided on that one: a wrong card is never decided on.
   */
  async #authorize(
    source: ProcessorSource,
    scope: Scope,
    operation: AskingFields,
  ): Promise<ProcessorResult> {
    const found = await this.#keptCardOf(source, scope, operation.processorCardId);
    let outcome = await this.#authorizeCard(source, scope, operation, found.cardId);
    const staleTie =
      found.kept &&
      !outcome.decision.approved &&
      outcome.decision.declineReason?.rule === 'card_not_found';
    if (staleTie) {
      const cardId = await this.#cardOf(source, scope, operation.processorCardId);
      outcome = await this.#authorizeCard(source, scope, operation, cardId);
    }
    this.decisions?.inc({
      outcome: outcome.decision.approved ? 'approved' : 'declined',
      decline_code: outcome.decision.declineCode ?? '',
      stand_in: String(outcome.standIn),
    });
    return decisionResult(outcome, operation.amount.minor, operation.amount.currency);
  }

  async #authorizeCard(
    source: ProcessorSource,
    scope: Scope,
    operation: AskingFields,
    cardId: string,
  ): Promise<AuthorizationOutcome> {
    const input = {
      ...this.#inputOf(operation, cardId),
      processorCard: { connectionId: source.connectionId, cardId: operation.processorCardId },
    };
    return authorizeWithinBudget(this.store, scope, input, this.settings, this.log, this.#standIn);
  }

  async #advise(
    source: ProcessorSource,
    scope: Scope,
    operation: AskingFields & { readonly approved: boolean; readonly reason: string },
  ): Promise<ProcessorResult> {
    const input = await this.#askingInput(source, scope, operation);
    const reason = operation.reason.slice(0, REASON_LENGTH_MAX) || 'processor_advice';
    const outcome = await this.store.message(
      (operations) => operations.advise(scope, { ...input, approved: operation.approved, reason }),
      { cardId: input.cardId, scope },
    );
    return decisionResult(outcome, operation.amount.minor, operation.amount.currency);
  }

  async #increment(
    scope: Scope,
    operation: Extract<ProcessorOperation, { readonly kind: 'increment' }>,
  ): Promise<ProcessorResult> {
    const hold = await this.#holdOf(scope, operation.authorizationNetworkId);
    const amount = holdAmountOf(operation.amount, hold, 'amount');
    const outcome = await this.store.message(
      (operations) =>
        operations.incrementAuthorization(scope, hold.id, {
          amount,
          networkTransactionId: operation.networkTransactionId,
          ...(operation.advice === true ? { advice: true } : {}),
        }),
      { authorizationId: hold.id },
    );
    return decisionResult(outcome, operation.amount.minor, operation.amount.currency);
  }

  /** A capture of a known hold; of an unknown one, a force capture (money already moved). */
  async #capture(
    source: ProcessorSource,
    scope: Scope,
    operation: Extract<ProcessorOperation, { readonly kind: 'capture' }>,
  ): Promise<ProcessorResult> {
    const hold = await this.store.authorizationByNetworkId(scope, operation.authorizationNetworkId);
    if (hold === null) {
      if (operation.amount === null)
        throw new SpendgateError(
          'transaction_not_found',
          'No authorization has this network id, and the capture names no amount.',
          'authorizationNetworkId',
        );
      const forced = {
        kind: 'force_capture',
        processorCardId: operation.processorCardId,
        amount: operation.amount,
        merchant: operation.merchant,
        networkTransactionId: operation.messageId,
      } as const;
      return this.#clearing(source, scope, forced, (operations, cardId) =>
        operations.forceCapture(scope, { ...clearingOf(forced), cardId }),
      );
    }
    return this.#holdChange(source, scope, operation, (operations, locked) => {
      const amount =
        operation.amount === null ? null : holdAmountOf(operation.amount, locked, 'amount');
      return operations.capture(scope, locked.id, amount, operation.final);
    });
  }

  async #refund(
    source: ProcessorSource,
    scope: Scope,
    operation: Extract<ProcessorOperation, { readonly kind: 'refund' }>,
  ): Promise<ProcessorResult> {
    const original =
      operation.authorizationNetworkId === undefined
        ? null
        : await this.store.authorizationByNetworkId(scope, operation.authorizationNetworkId);
    return this.#clearing(source, scope, operation, (operations, cardId) =>
      operations.refund(scope, {
        ...clearingOf(operation),
        cardId,
        ...(original === null ? {} : { transactionId: original.id }),
      }),
    );
  }

  /**
   * Capture and reverse: the REST routes' store operations, with the processor's message id
   * as the idempotency key (the record of Store.idempotent, as an Idempotency-Key would be).
   * A refusal other than a 400 or a 5xx is kept and answered again to a repeat, as there.
   */
  async #holdChange(
    source: ProcessorSource,
    scope: Scope,
    operation: FollowingFields & { readonly kind: string },
    change: (operations: StoreOperations, hold: TransactionRecord) => Promise<TransactionRecord>,
  ): Promise<ProcessorResult> {
    const hold = await this.#holdOf(scope, operation.authorizationNetworkId);
    const result = await this.store.idempotent(
      scope,
      {
        key: `${source.processor}:${source.connectionId}:${operation.messageId}`.slice(0, 255),
        method: 'POST',
        path: `/v1/authorizations/${hold.id}/${operation.kind}`,
        body: JSON.stringify(operation, (_, value: unknown) =>
          typeof value === 'bigint' ? value.toString() : value,
        ),
      },
      async (operations) => ({
        status: 200,
        body: presentTransaction(await change(operations, hold)),
      }),
      (error) =>
        error.status === 400 || error.status >= 500
          ? null
          : { status: error.status, body: errorBody(error.code, '', error.message, error.param) },
    );
    const body = result.response.body as { error?: { code: string; message: string } };
    if (result.response.status >= 400 && body.error !== undefined) {
      throw new SpendgateError(body.error.code as SpendgateError['code'], body.error.message);
    }
    return { kind: 'posting', transactionId: hold.id, replayed: result.replayed };
  }

  /** Force capture and refund: idempotent by their network id, in the store. */
  async #clearing(
    source: ProcessorSource,
    scope: Scope,
    operation: { readonly processorCardId: string },
    post: (
      operations: StoreOperations,
      cardId: string,
    ) => Promise<{ readonly transaction: TransactionRecord; readonly replayed: boolean }>,
  ): Promise<ProcessorResult> {
    const cardId = await this.#cardOf(source, scope, operation.processorCardId);
    const outcome = await this.store.message((operations) => post(operations, cardId), {
      cardId,
      scope,
    });
    return { kind: 'posting', transactionId: outcome.transaction.id, replayed: outcome.replayed };
  }

  async #askingInput(source: ProcessorSource, scope: Scope, operation: AskingFields) {
    return this.#inputOf(operation, await this.#cardOf(source, scope, operation.processorCardId));
  }

  #inputOf(operation: AskingFields, cardId: string) {
    const billing = decimalOf(operation.amount, 'amount');
    const merchant =
      operation.merchantAmount === undefined
        ? {}
        : (() => {
            const { amount, currency } = decimalOf(operation.merchantAmount, 'merchantAmount');
            return { merchantAmount: amount, merchantCurrency: currency };
          })();
    return authorizeInputOf({
      cardId,
      amount: billing.amount,
      currency: billing.currency,
      merchant: operation.merchant,
      networkTransactionId: operation.networkTransactionId,
      partialApprovalAllowed: operation.partialApprovalAllowed,
      ...merchant,
    });
  }

  /**
   * The card tied to the processor's card as PostgreSQL holds it now, or card_not_found
   * (nothing is recorded): what every operation but the authorize uses, as none of them checks
   * the tie again.
   */
  async #cardOf(source: ProcessorSource, scope: Scope, processorCardId: string): Promise<string> {
    const cardId =
      this.lookups === null
        ? await this.store.cardOfProcessorCard(scope, source.connectionId, processorCardId)
        : await this.lookups.freshCardOf(scope, source.connectionId, processorCardId);
    if (cardId !== null) return cardId;
    throw untied(processorCardId);
  }

  /** The card tied to the processor's card, maybe as kept in memory (`kept`): authorize only. */
  async #keptCardOf(
    source: ProcessorSource,
    scope: Scope,
    processorCardId: string,
  ): Promise<{ readonly cardId: string; readonly kept: boolean }> {
    if (this.lookups === null)
      return { cardId: await this.#cardOf(source, scope, processorCardId), kept: false };
    const found = await this.lookups.cardOf(scope, source.connectionId, processorCardId);
    if (found !== null) return found;
    throw untied(processorCardId);
  }

  async #holdOf(scope: Scope, networkTransactionId: string): Promise<TransactionRecord> {
    const hold = await this.store.authorizationByNetworkId(scope, networkTransactionId);
    if (hold !== null) return hold;
    throw new SpendgateError(
      'transaction_not_found',
      `No authorization has the network id ${networkTransactionId.slice(0, 64)}.`,
      'authorizationNetworkId',
    );
  }
}

const untied = (processorCardId: string) =>
  new SpendgateError(
    'card_not_found',
    `No card is tied to the processor's card ${processorCardId.slice(0, 64)}.`,
    'processorCard.cardId',
  );

function clearingOf(operation: {
  readonly amount: Parameters<typeof decimalOf>[0];
  readonly merchant: AskingFields['merchant'];
  readonly networkTransactionId: string;
}) {
  const { amount, currency } = decimalOf(operation.amount, 'amount');
  return {
    amount,
    currency,
    merchant: operation.merchant,
    networkTransactionId: operation.networkTransactionId,
  };
}

/**
 * The decision, with the approved amount in the message's own minor units: what was asked,
 * or, for a partial approval, the amount approved in the vault's asset, in the billing
 * currency (at par, or at the rate recorded), rounded down: never more than was held. An
 * increment's record is the whole hold, and an increment is never partial: what was asked.
 */
function decisionResult(
  outcome: AuthorizationOutcome,
  askedMinor: bigint | string,
  currency: string,
): ProcessorResult {
  let approvedMinor: bigint | null = null;
  if (outcome.decision.approved) {
    const transaction = outcome.transaction;
    const lifecycle = transaction?.lifecycle;
    approvedMinor =
      transaction != null && lifecycle?.partial === true
        ? minorOf(
            lifecycle.rate === null
              ? transaction.amount
              : transaction.amount.times(new Decimal(lifecycle.rate.value)),
            currency.toUpperCase(),
          )
        : BigInt(askedMinor);
  }
  return { kind: 'decision', outcome, approvedMinor, replayed: outcome.replayed };
}
