import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, query, type Page } from '../api';
import { Time } from '../components/time';
import { TransactionDetails } from '../components/transaction-details';
import { followStream } from '../stream';
import type { FeedEvent, Transaction } from '../types';
import { DeclineChart, type Decline } from './live-chart';

/*
 * Live authorizations: the last hour's decisions (List Transactions) then each one as it is
 * committed (GET /v1/events/stream, read with fetch), the approvals and declines of the last
 * hour counted, and the declines of the hour by reason, a minute a bar. The stream resumes
 * from the last event this tab read (Last-Event-ID), so that a visit goes on where the last
 * one stopped. A row opens the rule that declined it and its facts.
 */

/** Decisions kept on the page, newest first. */
const SHOWN_MAX = 200;
/** Decisions counted at most (the hour's); the oldest go first past it. */
const KEPT_MAX = 10_000;
/** Pages of the hour's decisions read when the page opens. */
const PAGES_MAX = 10;
const HOUR_MS = 3_600_000;
/** This tab's last event read, and when it was made: a resume point younger than an hour. */
const RESUME_ITEM = 'spendgate.console.live.lastEvent';

const reasonOf = (transaction: Transaction): string =>
  transaction.declineReason?.rule ?? transaction.declineCode ?? 'declined';

function resumePoint(nowMs: number): string | null {
  try {
    const saved = JSON.parse(sessionStorage.getItem(RESUME_ITEM) ?? 'null') as {
      id?: unknown;
      atMs?: unknown;
    } | null;
    if (typeof saved?.id !== 'string' || typeof saved.atMs !== 'number') return null;
    return nowMs - saved.atMs < HOUR_MS ? saved.id : null;
  } catch {
    return null;
  }
}

/** The hour's card authorizations, newest first, a few pages at most. */
async function lastHour(sinceMs: number): Promise<Transaction[]> {
  const found: Transaction[] = [];
  let after: string | undefined;
  for (let read = 0; read < PAGES_MAX; read += 1) {
    const page = await api<Page<Transaction>>(
      'GET',
      `/v1/transactions${query({
        type: 'card_authorization',
        startDate: new Date(sinceMs).toISOString(),
        limit: 100,
        startingAfter: after,
      })}`,
    );
    found.push(...page.data);
    after = page.data.at(-1)?.id;
    if (!page.hasMore || after === undefined) break;
  }
  return found;
}

/** `known` with `more` added, one entry per transaction, the newest KEPT_MAX. */
function merged(
  known: Map<string, Transaction>,
  more: Transaction[],
  replace: boolean,
): Map<string, Transaction> {
  const next = new Map(known);
  for (const transaction of more) {
    if (replace || !next.has(transaction.id)) next.set(transaction.id, transaction);
  }
  if (next.size <= KEPT_MAX) return next;
  const newest = [...next.values()]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    .slice(0, KEPT_MAX);
  return new Map(newest.map((transaction) => [transaction.id, transaction]));
}

export function LivePage() {
  const [state, setState] = useState('connecting');
  const [known, setKnown] = useState<Map<string, Transaction>>(new Map());
  const [open, setOpen] = useState<Transaction | null>(null);
  const [nowMs, setNowMs] = useState(Date.now());

  useEffect(() => {
    const controller = new AbortController();
    const openedMs = Date.now();
    lastHour(openedMs - HOUR_MS)
      .then((found) => {
        // What the stream brought meanwhile is newer: kept.
        setKnown((now) => merged(now, found, false));
      })
      .catch(() => undefined);
    void followStream(
      '/v1/events/stream',
      {
        onState: (next) => {
          setState(next);
        },
        onEvent: (_type, data, id) => {
          const event = JSON.parse(data) as FeedEvent;
          if (id !== null) {
            sessionStorage.setItem(
              RESUME_ITEM,
              JSON.stringify({ id, atMs: Date.parse(event.createdAt) }),
            );
          }
          setKnown((now) => merged(now, [event.data.object], true));
        },
      },
      controller.signal,
      resumePoint(openedMs),
    );
    const clock = setInterval(() => {
      setNowMs(Date.now());
    }, 30_000);
    return () => {
      controller.abort();
      clearInterval(clock);
    };
  }, []);

  const hour = useMemo(
    () =>
      [...known.values()]
        .filter((transaction) => Date.parse(transaction.createdAt) > nowMs - HOUR_MS)
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt)),
    [known, nowMs],
  );
  const declines: Decline[] = hour
    .filter((transaction) => transaction.status === 'declined')
    .map((transaction) => ({
      atMs: Date.parse(transaction.createdAt),
      reason: reasonOf(transaction),
    }));
  const approved = hour.length - declines.length;
  const shown = hour.slice(0, SHOWN_MAX);
  return (
    <section aria-labelledby="live-title">
      <h1 id="live-title">Live authorizations</h1>
      <p>
        Stream: <strong data-testid="stream-state">{state}</strong>
      </p>
      <div class="grid counts" role="status" aria-live="polite">
        <article>
          <h2>Approved, last hour</h2>
          <p class="count" data-testid="approved-count">
            {approved}
          </p>
        </article>
        <article>
          <h2>Declined, last hour</h2>
          <p class="count" data-testid="declined-count">
            {declines.length}
          </p>
        </article>
      </div>
      <DeclineChart declines={declines} nowMs={nowMs} />
      <h2>Decisions</h2>
      <div class="overflow-auto">
        <table class="striped">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Decision</th>
              <th scope="col" class="amount">
                Amount
              </th>
              <th scope="col">Merchant</th>
              <th scope="col">Rule</th>
            </tr>
          </thead>
          <tbody data-testid="decisions">
            {shown.length === 0 ? (
              <tr>
                <td colSpan={5}>Waiting for authorizations…</td>
              </tr>
            ) : null}
            {shown.map((transaction) => (
              <tr
                key={transaction.id}
                data-transaction={transaction.id}
                class={transaction.status === 'declined' ? 'declined' : 'approved'}
              >
                <td>
                  <button
                    type="button"
                    class="link"
                    aria-expanded={open?.id === transaction.id}
                    onClick={() => {
                      setOpen(open?.id === transaction.id ? null : transaction);
                    }}
                  >
                    <Time at={transaction.createdAt} />
                  </button>
                </td>
                <td>{transaction.status === 'declined' ? 'declined' : 'approved'}</td>
                <td class="amount">
                  {transaction.amount} {transaction.currency}
                </td>
                <td>{transaction.merchant?.name ?? ''}</td>
                <td>{transaction.declineReason?.rule ?? transaction.declineCode ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {open === null ? null : <TransactionDetails transaction={open} />}
    </section>
  );
}
