import { useEffect, useMemo, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { messageOf, api } from '../api';
import { Alert } from '../components/alert';
import { Chart } from '../components/chart';
import {
  LIMITS_VAULTS_MAX,
  nearLimits,
  readPages,
  startOfUtcDay,
  topReasons,
  totalsOf,
  type VaultWarning,
} from '../overview-data';
import { latestPolicy } from '../policy-versions';
import { can, useSession } from '../session';
import { Time } from '../components/time';
import type { PolicyLimits, Transaction, Vault } from '../types';

/*
 * The first screen: how the money and today's decisions are doing, from the vaults list, today's
 * card authorizations (UTC day) and the limits of the vaults' policies. Each part says when it
 * read only the first pages.
 */

const MINUTE_S = 60;
const REASONS_SHOWN_MAX = 5;

export function OverviewPage() {
  const session = useSession();
  const [vaults, setVaults] = useState<{ rows: Vault[]; truncated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    readPages<Vault>('/v1/vaults', {}, (vault) => vault.id)
      .then(setVaults)
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, []);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <Alert message={error} />
      {vaults === null ? (
        error === null ? (
          <p aria-busy="true">Loading vaults…</p>
        ) : null
      ) : (
        <>
          <Totals vaults={vaults.rows} truncated={vaults.truncated} />
          <Watchlist vaults={vaults.rows} />
        </>
      )}
      {can(session, 'transactions:read') ? <Today /> : null}
      <p>
        <a href="#/vaults">All vaults</a>
      </p>
    </section>
  );
}

function Totals({ vaults, truncated }: { vaults: Vault[]; truncated: boolean }) {
  const totals = totalsOf(vaults);
  return (
    <section aria-labelledby="totals-title">
      <h2 id="totals-title">Balances by currency</h2>
      {totals.length === 0 ? (
        <p>
          No vault yet: <a href="#/vaults">create one</a>.
        </p>
      ) : (
        <div class="overflow-auto">
          <table class="striped" data-testid="totals">
            <thead>
              <tr>
                <th scope="col">Currency</th>
                <th scope="col" class="amount">
                  Vaults
                </th>
                <th scope="col" class="amount">
                  Available
                </th>
                <th scope="col" class="amount">
                  Pending
                </th>
                <th scope="col" class="amount">
                  Ledger
                </th>
              </tr>
            </thead>
            <tbody>
              {totals.map((total) => (
                <tr key={total.currency} data-currency={total.currency}>
                  <th scope="row">{total.currency}</th>
                  <td class="amount">{total.vaults}</td>
                  <td class="amount">{total.available}</td>
                  <td class="amount">{total.pending}</td>
                  <td class="amount">{total.ledger}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {truncated ? <p>Totals of the first {vaults.length} vaults only.</p> : null}
    </section>
  );
}

/** Overdrawn vaults, and vaults near a limit of their policy (the first LIMITS_VAULTS_MAX). */
function Watchlist({ vaults }: { vaults: Vault[] }) {
  const [warnings, setWarnings] = useState<VaultWarning[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const overdrawn = vaults
      .filter((vault) => vault.overdrawnAt != null)
      .map((vault) => ({ vault, text: 'overdrawn since', since: vault.overdrawnAt ?? '' }));
    const open = vaults.filter((vault) => vault.status !== 'closed').slice(0, LIMITS_VAULTS_MAX);
    Promise.all(
      open.map(async (vault) => {
        // A vault without a policy has no limits: asked first, so that no 404 is logged.
        if ((await latestPolicy(vault.id)) === null) return [];
        const limits = await api<PolicyLimits>('GET', `/v1/vaults/${vault.id}/policy/limits`);
        return nearLimits(vault, limits);
      }),
    )
      .then((near) => {
        setWarnings([...overdrawn, ...near.flat()]);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [vaults]);
  return (
    <section aria-labelledby="watch-title">
      <h2 id="watch-title">Vaults to watch</h2>
      <Alert message={error} />
      {warnings === null ? (
        error === null ? (
          <p aria-busy="true">Reading limits…</p>
        ) : null
      ) : warnings.length === 0 ? (
        <p>No vault is overdrawn or near a limit.</p>
      ) : (
        <ul data-testid="watchlist">
          {warnings.map((warning, index) => (
            <li key={`${warning.vault.id}-${String(index)}`}>
              <a href={`#/vaults/${warning.vault.id}`}>{warning.vault.name}</a>: {warning.text}
              {warning.since === undefined ? null : (
                <>
                  {' '}
                  <Time at={warning.since} />
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Today() {
  const [today, setToday] = useState<{ rows: Transaction[]; truncated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const since = useMemo(() => startOfUtcDay(Date.now()), []);
  useEffect(() => {
    readPages<Transaction>(
      '/v1/transactions',
      { type: 'card_authorization', startDate: since },
      (row) => row.id,
    )
      .then(setToday)
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [since]);
  const rows = today?.rows ?? [];
  const approved = rows.filter((row) => row.status !== 'declined' && row.status !== 'failed');
  const declined = rows.filter((row) => row.status === 'declined');
  return (
    <section aria-labelledby="today-title">
      <h2 id="today-title">Today’s decisions (UTC)</h2>
      <Alert message={error} />
      {today === null ? (
        error === null ? (
          <p aria-busy="true">Loading today’s authorizations…</p>
        ) : null
      ) : (
        <>
          <div class="grid counts">
            <article>
              <h3>Approved</h3>
              <p class="count" data-testid="today-approved">
                {approved.length}
              </p>
            </article>
            <article>
              <h3>Declined</h3>
              <p class="count" data-testid="today-declined">
                {declined.length}
              </p>
            </article>
          </div>
          {today.truncated ? (
            <p>Counted from the newest {rows.length} authorizations only.</p>
          ) : null}
          {rows.length === 0 ? (
            <p>No authorization today.</p>
          ) : (
            <DecisionsChart approved={approved} declined={declined} />
          )}
          <TopReasons transactions={rows} />
        </>
      )}
    </section>
  );
}

function DecisionsChart({
  approved,
  declined,
}: {
  approved: Transaction[];
  declined: Transaction[];
}) {
  const { data, options } = useMemo(() => {
    const minuteOf = (t: Transaction): number =>
      Math.floor(Date.parse(t.createdAt) / 1000 / MINUTE_S) * MINUTE_S;
    const all = [...approved, ...declined].map(minuteOf);
    const first = Math.min(...all);
    const last = Math.max(...all);
    const minutes = Array.from(
      { length: (last - first) / MINUTE_S + 1 },
      (_, index) => first + index * MINUTE_S,
    );
    const count = (rows: Transaction[]): number[] => {
      const slots = minutes.map(() => 0);
      for (const row of rows) {
        const slot = (minuteOf(row) - first) / MINUTE_S;
        slots[slot] = (slots[slot] ?? 0) + 1;
      }
      return slots;
    };
    // Side by side in each minute: approvals left of the tick, declines right of it.
    const barsOf = (align: -1 | 1) => {
      const bars = uPlot.paths.bars?.({ size: [0.4, 12], align });
      return bars === undefined ? {} : { paths: bars };
    };
    const options: Omit<uPlot.Options, 'width' | 'height'> = {
      // Padded by two minutes each side, so that one busy minute is a bar, not the whole width.
      scales: {
        x: { time: true, range: [first - 2 * MINUTE_S, last + 2 * MINUTE_S] },
        y: { range: [0, null] },
      },
      series: [
        {},
        {
          label: 'Approved',
          stroke: '#047857',
          fill: '#04785799',
          ...barsOf(-1),
          points: { show: false },
        },
        {
          label: 'Declined',
          stroke: '#b91c1c',
          fill: '#b91c1c99',
          ...barsOf(1),
          points: { show: false },
        },
      ],
    };
    return { data: [minutes, count(approved), count(declined)] as uPlot.AlignedData, options };
  }, [approved, declined]);
  return (
    <Chart
      label="Approvals and declines per minute today"
      options={options}
      data={data}
      height={180}
    />
  );
}

function TopReasons({ transactions }: { transactions: Transaction[] }) {
  const reasons = topReasons(transactions, REASONS_SHOWN_MAX);
  return (
    <>
      <h3>Top decline reasons</h3>
      {reasons.length === 0 ? (
        <p>No decline today.</p>
      ) : (
        <table class="reasons" data-testid="top-reasons">
          <tbody>
            {reasons.map((reason) => (
              <tr key={reason.message}>
                <th scope="row" title={reason.rules.join(', ')}>
                  {reason.message}
                </th>
                <td class="amount">{reason.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
