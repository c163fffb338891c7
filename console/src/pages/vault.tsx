import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { Chart } from '../components/chart';
import { TransactionsTable } from '../components/transactions-table';
import { can, useSession } from '../session';
import type { BalanceSnapshot, Card, Vault } from '../types';
import { PendingHolds } from './vault-holds';
import { VaultPolicy } from './vault-policy';

const DAY_S = 86_400;
/** The share of the days' span left empty each side of the first and last day. */
const PAD_SHARE = 0.03;

/**
 * The x-axis bounds of days (epoch seconds, oldest first): the first to the last day, padded
 * by a small share of the span (at least a quarter day); one day alone gets a day each side.
 */
export function timeBounds(days: number[]): [number, number] {
  const first = days[0];
  const last = days.at(-1);
  if (first === undefined || last === undefined) {
    const now = Math.floor(Date.now() / 1000);
    return [now - DAY_S, now + DAY_S];
  }
  if (first === last) return [first - DAY_S, last + DAY_S];
  const pad = Math.max((last - first) * PAD_SHARE, DAY_S / 4);
  return [first - pad, last + pad];
}

/** A vault: its balance history, its cards, its transactions and its policy. */
export function VaultPage({ vaultId }: { vaultId: string }) {
  const session = useSession();
  const [vault, setVault] = useState<Vault | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Bumped by a capture or a reversal: the balance and the transactions are read again.
  const [version, setVersion] = useState(0);
  useEffect(() => {
    api<Vault>('GET', `/v1/vaults/${encodeURIComponent(vaultId)}`)
      .then(setVault)
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [vaultId, version]);
  if (vault === null)
    return error === null ? <p aria-busy="true">Loading…</p> : <Alert message={error} />;
  return (
    <section aria-labelledby="vault-title">
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href="#/vaults">Vaults</a>
          </li>
          <li>{vault.name}</li>
        </ul>
      </nav>
      <h1 id="vault-title">{vault.name}</h1>
      <p>
        <code>{vault.id}</code> · {vault.status} · available{' '}
        <strong data-testid="available">
          {vault.balance.available} {vault.currency}
        </strong>{' '}
        · pending {vault.balance.pending} · ledger {vault.balance.ledger}
      </p>
      <p>
        Deposit address:{' '}
        {vault.depositAddress === null ? (
          <span data-testid="deposit-address">not given yet (the deposit watcher assigns one)</span>
        ) : (
          <code class="address" data-testid="deposit-address">
            {vault.depositAddress}
          </code>
        )}{' '}
        <small>
          (send {vault.currency} on {vault.network} here)
        </small>
      </p>
      <BalanceHistory vault={vault} />
      {can(session, 'cards:read') ? <VaultCards vaultId={vault.id} /> : null}
      {can(session, 'transactions:read') && can(session, 'authorizations:write') ? (
        <PendingHolds
          vaultId={vault.id}
          onChange={() => {
            setVersion(version + 1);
          }}
        />
      ) : null}
      {can(session, 'transactions:read') ? (
        <section aria-labelledby="transactions-title">
          <h2 id="transactions-title">Transactions</h2>
          <TransactionsTable key={version} vaultId={vault.id} />
        </section>
      ) : null}
      <section aria-labelledby="policy-title">
        <h2 id="policy-title">Policy</h2>
        <VaultPolicy vaultId={vault.id} />
        <a href={`#/vaults/${vault.id}/policy`} role="button" class="secondary">
          {can(session, 'policies:write') ? 'Edit policy' : 'View policy'}
        </a>
      </section>
    </section>
  );
}

function BalanceHistory({ vault }: { vault: Vault }) {
  const [days, setDays] = useState<BalanceSnapshot[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    // Another vault's days are not shown while this one's load.
    setDays(null);
    api<Page<BalanceSnapshot>>('GET', `/v1/vaults/${vault.id}/balance/history?limit=90`)
      .then((page) => {
        setDays([...page.data].reverse());
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [vault.id]);
  const data = useMemo(() => {
    const rows = days ?? [];
    return [
      rows.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000),
      rows.map((day) => Number(day.ledger)),
      rows.map((day) => Number(day.available)),
    ] as [number[], number[], number[]];
  }, [days]);
  const options = useMemo(
    () => ({
      // Bounds from the data themselves: uPlot's own guess for few days ran over years.
      scales: { x: { time: true, auto: false, range: timeBounds(data[0]) } },
      series: [
        {},
        {
          label: `Ledger (${vault.currency})`,
          stroke: '#1d4ed8',
          width: 2,
          points: { show: true },
        },
        { label: 'Available', stroke: '#047857', width: 2, dash: [6, 4], points: { show: true } },
      ],
    }),
    [vault.currency, data],
  );
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">Balance history</h2>
      <Alert message={error} />
      {days === null ? (
        <p aria-busy="true">Loading history…</p>
      ) : (
        <>
          <Chart
            label={`Daily ledger and available balance of ${vault.name}, today live`}
            options={options}
            data={data}
          />
          <details>
            <summary>Daily balances as a table</summary>
            <table class="striped">
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col" class="amount">
                    Ledger
                  </th>
                  <th scope="col" class="amount">
                    Available
                  </th>
                  <th scope="col">Final</th>
                </tr>
              </thead>
              <tbody>
                {days.map((day) => (
                  <tr key={day.date}>
                    <td>{day.date}</td>
                    <td class="amount">{day.ledger}</td>
                    <td class="amount">{day.available}</td>
                    <td>{day.final ? 'yes' : 'live'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </section>
  );
}

function VaultCards({ vaultId }: { vaultId: string }) {
  const [cards, setCards] = useState<Card[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<Page<Card>>('GET', `/v1/cards?limit=100&vaultId=${encodeURIComponent(vaultId)}`)
      .then((page) => {
        setCards(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, [vaultId]);
  return (
    <section aria-labelledby="vault-cards-title">
      <h2 id="vault-cards-title">Cards</h2>
      <Alert message={error} />
      {cards === null ? null : cards.length === 0 ? (
        <p>No card on this vault.</p>
      ) : (
        <ul>
          {cards.map((card) => (
            <li key={card.id}>
              •••• {card.last4} · {card.cardholderName} · {card.status} ·{' '}
              <a href={`#/cards/${card.id}`}>manage</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
