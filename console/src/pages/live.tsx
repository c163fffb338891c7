import { useEffect, useMemo, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api, query, type Page } from '../api';
import { Chart } from '../components/chart';
import { TransactionDetails } from '../components/transaction-details';
import { followStream } from '../stream';
import type { FeedEvent, Transaction } from '../types';

/*
 * Live authorizations: decisions as they are committed (GET /v1/events/stream, read with
 * fetch), the approvals and declines counted since the page opened, and the declines of the
 * last hour by reason, a minute a bar. A row opens the rule that declined it and its facts.
 */

/** Decisions kept on the page, newest first. */
const SHOWN_MAX = 200;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Reasons drawn as their own series; the rest are summed as "other". */
const REASONS_DRAWN_MAX = 6;
const COLOURS = ['#b91c1c', '#c2410c', '#7c3aed', '#0369a1', '#047857', '#a16207', '#475569'];

const reasonOf = (transaction: Transaction): string =>
  transaction.declineReason?.rule ?? transaction.declineCode ?? 'declined';

export function LivePage() {
  const [state, setState] = useState('connecting');
  const [decisions, setDecisions] = useState<Transaction[]>([]);
  const [counts, setCounts] = useState({ approved: 0, declined: 0 });
  const [declines, setDeclines] = useState<{ atMs: number; reason: string }[]>([]);
  const [open, setOpen] = useState<Transaction | null>(null);
  const [nowMs, setNowMs] = useState(Date.now());

  useEffect(() => {
    const controller = new AbortController();
    // The hour before the page opened, so that the chart starts full.
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    api<Page<Transaction>>(
      'GET',
      `/v1/transactions${query({ status: 'declined', type: 'card_authorization', startDate: since, limit: 100 })}`,
    )
      .then((page) => {
        setDeclines((now) => [
          ...page.data.map((t) => ({ atMs: Date.parse(t.createdAt), reason: reasonOf(t) })),
          ...now,
        ]);
      })
      .catch(() => undefined);
    void followStream(
      '/v1/events/stream',
      {
        onState: (next) => {
          setState(next);
        },
        onEvent: (_type, data) => {
          const event = JSON.parse(data) as FeedEvent;
          const transaction = event.data.object;
          setDecisions((shown) => [transaction, ...shown].slice(0, SHOWN_MAX));
          const approved = event.type === 'authorization.approved';
          setCounts((now) => ({
            approved: now.approved + (approved ? 1 : 0),
            declined: now.declined + (approved ? 0 : 1),
          }));
          if (!approved) {
            setDeclines((now) => [
              ...now,
              { atMs: Date.parse(transaction.createdAt), reason: reasonOf(transaction) },
            ]);
          }
        },
      },
      controller.signal,
    );
    const clock = setInterval(() => {
      setNowMs(Date.now());
    }, 30_000);
    return () => {
      controller.abort();
      clearInterval(clock);
    };
  }, []);

  const recent = useMemo(() => declines.filter((d) => d.atMs > nowMs - HOUR_MS), [declines, nowMs]);
  return (
    <section aria-labelledby="live-title">
      <h1 id="live-title">Live authorizations</h1>
      <p>
        Stream: <strong data-testid="stream-state">{state}</strong>
      </p>
      <div class="grid counts" role="status" aria-live="polite">
        <article>
          <h2>Approved since opened</h2>
          <p class="count" data-testid="approved-count">
            {counts.approved}
          </p>
        </article>
        <article>
          <h2>Declined since opened</h2>
          <p class="count" data-testid="declined-count">
            {counts.declined}
          </p>
        </article>
      </div>
      <DeclineChart declines={recent} nowMs={nowMs} />
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
            {decisions.length === 0 ? (
              <tr>
                <td colSpan={5}>Waiting for authorizations…</td>
              </tr>
            ) : null}
            {decisions.map((transaction) => (
              <tr
                key={transaction.id}
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
                    {transaction.createdAt.slice(11, 19)}
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

function DeclineChart({
  declines,
  nowMs,
}: {
  declines: { atMs: number; reason: string }[];
  nowMs: number;
}) {
  const totals = new Map<string, number>();
  for (const decline of declines) totals.set(decline.reason, (totals.get(decline.reason) ?? 0) + 1);
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1]);
  const drawn = ranked.slice(0, REASONS_DRAWN_MAX).map(([reason]) => reason);
  const key = JSON.stringify([drawn, declines.length, nowMs]);
  const { data, options } = useMemo(() => {
    const startMs = Math.floor((nowMs - HOUR_MS) / MINUTE_MS) * MINUTE_MS;
    const minutes = Array.from({ length: 61 }, (_, index) => (startMs + index * MINUTE_MS) / 1000);
    const series = [...drawn, ...(ranked.length > drawn.length ? ['other'] : [])];
    const rows = series.map(() => minutes.map(() => 0));
    for (const decline of declines) {
      const slot = Math.floor((decline.atMs - startMs) / MINUTE_MS);
      const index = drawn.includes(decline.reason)
        ? drawn.indexOf(decline.reason)
        : series.length - 1;
      const row = rows[index];
      if (row !== undefined && slot >= 0 && slot < minutes.length) row[slot] = (row[slot] ?? 0) + 1;
    }
    const bars = uPlot.paths.bars?.({ size: [0.8, 12] });
    const options: Omit<uPlot.Options, 'width' | 'height'> = {
      scales: { x: { time: true }, y: { range: [0, null] } },
      series: [
        {},
        ...series.map((reason, index) => ({
          label: reason,
          stroke: COLOURS[index % COLOURS.length] ?? '#475569',
          fill: COLOURS[index % COLOURS.length] ?? '#475569',
          ...(bars === undefined ? {} : { paths: bars }),
          points: { show: false },
        })),
      ],
    };
    return { data: [minutes, ...rows] as uPlot.AlignedData, options };
    // The key sums up the inputs: recomputed only when one of them changes.
  }, [key]);
  return (
    <section aria-labelledby="reasons-title">
      <h2 id="reasons-title">Declines by reason, last hour</h2>
      <Chart
        label="Declines per minute over the last hour, by reason"
        options={options}
        data={data}
        height={180}
      />
      <table class="reasons" data-testid="decline-reasons">
        <caption class="visually-hidden">Declines in the last hour by reason</caption>
        <tbody>
          {ranked.length === 0 ? (
            <tr>
              <td>No decline in the last hour.</td>
            </tr>
          ) : null}
          {ranked.map(([reason, count]) => (
            <tr key={reason}>
              <th scope="row">
                <code>{reason}</code>
              </th>
              <td class="amount">{count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
