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

/**
 * A transaction's life, message by message (contract v1.2, section 16): what each moved and
 * what the hold was after it, so an operator sees why a capture posted above its hold or why
 * a hold is gone.
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
  return (
    <table class="timeline" data-testid="timeline">
      <caption>Timeline ({timeline.currency})</caption>
      <thead>
        <tr>
          <th>At</th>
          <th>Message</th>
          <th>Amount</th>
          <th>Held after</th>
          <th>Network id</th>
        </tr>
      </thead>
      <tbody>
        {timeline.messages.map((message, index) => (
          <tr key={index} class={message.approved === false ? 'declined' : undefined}>
            <td>
              <Time at={message.createdAt} />
            </td>
            <td>
              {KIND_WORDS[message.kind] ?? message.kind} {outcomeOf(message.approved)}
            </td>
            <td>{message.amount}</td>
            <td>{message.heldAmount}</td>
            <td>
              <code>{message.networkTransactionId ?? ''}</code>
            </td>
          </tr>
        ))}
      </tbody>
      {timeline.truncated ? (
        <tfoot>
          <tr>
            <td colSpan={5}>Only the first 500 messages are shown.</td>
          </tr>
        </tfoot>
      ) : null}
    </table>
  );
}
