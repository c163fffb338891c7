import type { Transaction } from '../types';
import { Time } from './time';
import { TransactionTimeline } from './transaction-timeline';
import { statusText } from './transaction-status';

/**
 * What a decision saw and why: amount, merchant, the rule that declined it, shadow matches;
 * and for a card transaction, its timeline.
 */
export function TransactionDetails({ transaction }: { transaction: Transaction }) {
  const merchant = transaction.merchant;
  return (
    <article class="details" aria-label={`Transaction ${transaction.id}`}>
      <header>
        <strong data-testid="details-status">
          {transaction.status === 'declined' ? 'Declined' : statusText(transaction)}
        </strong>{' '}
        <code>{transaction.id}</code>
      </header>
      <dl>
        <dt>Amount</dt>
        <dd>
          {transaction.amount} {transaction.currency}
        </dd>
        {merchant === null ? null : (
          <>
            <dt>Merchant</dt>
            <dd>
              {merchant.name} (MCC {merchant.mcc}, {merchant.country}
              {merchant.city === null ? '' : `, ${merchant.city}`})
            </dd>
          </>
        )}
        {transaction.cardId === null ? null : (
          <>
            <dt>Card</dt>
            <dd>
              <code>{transaction.cardId}</code>
            </dd>
          </>
        )}
        {transaction.declineCode === null ? null : (
          <>
            <dt>Decline code</dt>
            <dd>
              <code>{transaction.declineCode}</code>
            </dd>
          </>
        )}
        {transaction.failureReason === null ? null : (
          <>
            <dt>Failure reason</dt>
            <dd>
              <code>{transaction.failureReason}</code>
            </dd>
          </>
        )}
        {transaction.declineReason === null ? null : (
          <>
            <dt>Declined by rule</dt>
            <dd class="decline-rule">
              <code>{transaction.declineReason.rule}</code>
              {transaction.declineReason.policy === 'card' ? ' (the card’s own policy)' : ''}:{' '}
              {transaction.declineReason.message}
            </dd>
          </>
        )}
        {transaction.shadowMatches.length === 0 ? null : (
          <>
            <dt>Shadow rules matched</dt>
            <dd>
              <ul>
                {transaction.shadowMatches.map((match) => (
                  <li key={match.rule}>
                    <code>{match.rule}</code>: {match.message}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        <dt>At</dt>
        <dd>
          <Time at={transaction.createdAt} />
        </dd>
      </dl>
      {transaction.type === 'card_authorization' ||
      transaction.type === 'force_capture' ||
      transaction.type === 'refund' ? (
        <TransactionTimeline transactionId={transaction.id} />
      ) : null}
    </article>
  );
}
