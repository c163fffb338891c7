import { useEffect, useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import type { Timeline } from '../types';
import { Time } from './time';

const KIND_WORDS: Record<string, string> = {
  authorization: 'Authorized',
  increment: 'Increment',
  capture: 'Captured',
  reversal: 'Released',
  expiry: 'Expired',
  advice: 'Network advice',
  refund: 'Refunded',
};

function outcomeOf(approved: boolean | null): string {
  if (approved === null) return '';
  return approved ? 'approved' : 'declined';
}

type Message = Timeline['messages'][number];

/**
 * A capture converted at its own price (issue 35): what it captured in the billing currency,
 * and the rate it used (value, source, at), which may differ from the authorization's.
 */
function Converted({ message, asset }: { message: Message; asset: string }) {
  const { billing, rate } = message;
  if (billing === null || rate === null) return null;
  return (
    <>
      <span class="billing">
        {billing.amount} {billing.currency}
      </span>{' '}
      <span class="rate">
        at <data value={rate.value}>{rate.value}</data> {billing.currency}/{asset} (
        <code>{rate.source}</code>, <Time at={rate.at} />)
      </span>
    </>
  );
}

/**
 * A transaction's life, message by message (contract v1.2, section 16): what each moved and
 * what the hold was after it, so an operator sees why a capture posted above its hold or why
 * a hold is gone; and, for captures converted at a price, each one's billing amount and rate
 * (a column only timelines that have one show: an asset's timeline reads as before).
 */
export function TransactionTimeline({ transactionId }: { transactionId: string }) {
  const [timeline, setTimeline] = useState<Timeline | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    setTimeline(null);
    setProblem(null);
    api<Timeline>('GET', `/v1/transactions/${encodeURIComponent(transactionId)}/timeline`, {
      signal: controller.signal,
    })
      .then(setTimeline)
      .catch((error: unknown) => {
        if (!controller.signal.aborted) setProblem(messageOf(error));
      });
    return () => {
      controller.abort();
    };
  }, [transactionId]);
  if (problem !== null) return <p role="alert">Timeline: {problem}</p>;
  if (timeline === null) return <p aria-busy="true">Loading the timeline…</p>;
  if (timeline.messages.length === 0) return <p>No lifecycle messages.</p>;
  const converted = timeline.messages.some((message) => message.billing !== null);
  return (
    <table class="timeline" data-testid="timeline">
      <caption>Timeline ({timeline.currency})</caption>
      <thead>
        <tr>
          <th>At</th>
          <th>Message</th>
          <th>Amount</th>
          <th>Held after</th>
          {converted ? <th>Converted (billing amount at the capture's rate)</th> : null}
          <th>Network id</th>
        </tr>
      </thead>
      <tbody>
        {timeline.messages.map((message, index) => (
          <tr
            key={index}
            class={message.approved === false ? 'declined' : undefined}
            data-kind={message.kind}
          >
            <td>
              <Time at={message.createdAt} />
            </td>
            <td>
              {KIND_WORDS[message.kind] ?? message.kind} {outcomeOf(message.approved)}
            </td>
            <td>{message.amount}</td>
            <td>{message.heldAmount}</td>
            {converted ? (
              <td class="converted">
                <Converted message={message} asset={timeline.currency} />
              </td>
            ) : null}
            <td>
              <code>{message.networkTransactionId ?? ''}</code>
            </td>
          </tr>
        ))}
      </tbody>
      {timeline.truncated ? (
        <tfoot>
          <tr>
            <td colSpan={converted ? 6 : 5}>Only the first 500 messages are shown.</td>
          </tr>
        </tfoot>
      ) : null}
    </table>
  );
}
