import { useState } from 'preact/hooks';
import { api } from '../api';
import type { AuthorizationDecision as Decision, PolicyBacktest as Backtest } from '../types';

/*
 * Trying a draft before it is saved: one simulated purchase (Simulate Policy: the decision the
 * draft would give now, with the vault's spend so far), and a backtest (the vault's recorded
 * authorizations of a window replayed under the draft: what would change, by rule).
 */

/** Polls of a queued backtest before the page stops waiting (the worker role runs it). */
const BACKTEST_POLLS_MAX = 60;
const BACKTEST_POLL_MS = 2_000;

interface TrialProps {
  readonly vaultId: string;
  /** The draft when it parses and passes the schema; undefined otherwise. */
  readonly draft: unknown;
  readonly onRefused: (failure: unknown) => void;
}

function useField(initial: string) {
  const [value, setValue] = useState(initial);
  return {
    value,
    onInput: (event: Event) => {
      setValue((event.currentTarget as HTMLInputElement).value);
    },
  };
}

export function SimulatePanel({ vaultId, draft, onRefused }: TrialProps) {
  const amount = useField('25.00');
  const merchant = useField('Corner Cafe');
  const mcc = useField('5814');
  const country = useField('US');
  const [decision, setDecision] = useState<Decision | null>(null);
  const [busy, setBusy] = useState(false);
  const simulate = async (): Promise<void> => {
    setBusy(true);
    setDecision(null);
    try {
      setDecision(
        await api<Decision>('POST', `/v1/vaults/${vaultId}/policy/simulate`, {
          body: {
            policy: draft,
            transaction: {
              amount: amount.value,
              merchant: { name: merchant.value, mcc: mcc.value, country: country.value },
            },
          },
        }),
      );
    } catch (failure) {
      onRefused(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <article aria-labelledby="simulate-title">
      <h2 id="simulate-title">Simulate one purchase</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void simulate();
        }}
      >
        <div class="grid">
          <label>
            Amount
            <input name="amount" inputMode="decimal" required {...amount} />
          </label>
          <label>
            Merchant
            <input name="merchant" required {...merchant} />
          </label>
          <label>
            MCC
            <input name="mcc" required pattern="[0-9]{4}" {...mcc} />
          </label>
          <label>
            Country
            <input name="country" required pattern="[A-Z]{2}" {...country} />
          </label>
        </div>
        <button
          type="submit"
          class="secondary"
          disabled={draft === undefined || busy}
          aria-busy={busy}
        >
          Simulate with the draft
        </button>
      </form>
      {decision === null ? null : (
        <p role="status" data-testid="simulation">
          {decision.approved ? 'Approved.' : `Declined (${decision.declineCode ?? ''})`}
          {decision.declineReason === null
            ? ''
            : ` by ${decision.declineReason.rule}: ${decision.declineReason.message}`}
        </p>
      )}
    </article>
  );
}

function isoDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

export function BacktestPanel({ vaultId, draft, onRefused }: TrialProps) {
  const startDate = useField(isoDay(-6));
  const endDate = useField(isoDay(0));
  const [backtest, setBacktest] = useState<Backtest | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (): Promise<void> => {
    setBusy(true);
    setBacktest(null);
    try {
      let current = await api<Backtest>('POST', `/v1/vaults/${vaultId}/policy/backtest`, {
        body: { policy: draft, startDate: startDate.value, endDate: endDate.value },
      });
      for (
        let poll = 0;
        poll < BACKTEST_POLLS_MAX && (current.status === 'queued' || current.status === 'running');
        poll += 1
      ) {
        setBacktest(current);
        await new Promise((resolve) => setTimeout(resolve, BACKTEST_POLL_MS));
        current = await api<Backtest>(
          'GET',
          `/v1/vaults/${vaultId}/policy/backtests/${current.id}`,
        );
      }
      setBacktest(current);
    } catch (failure) {
      onRefused(failure);
    } finally {
      setBusy(false);
    }
  };
  const result = backtest?.result ?? null;
  return (
    <article aria-labelledby="backtest-title">
      <h2 id="backtest-title">Backtest the draft</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <div class="grid">
          <label>
            From (UTC day)
            <input name="startDate" type="date" required {...startDate} />
          </label>
          <label>
            To (UTC day)
            <input name="endDate" type="date" required {...endDate} />
          </label>
        </div>
        <button
          type="submit"
          class="secondary"
          disabled={draft === undefined || busy}
          aria-busy={busy}
        >
          Run backtest
        </button>
      </form>
      {backtest === null ? null : result === null ? (
        <p role="status">
          Backtest {backtest.status}
          {backtest.failureMessage === null ? '' : `: ${backtest.failureMessage}`}
        </p>
      ) : (
        <div role="status" data-testid="backtest">
          <p>
            {result.authorizations} authorizations, {result.replayed} replayed:{' '}
            <strong>{result.approvedToDeclined}</strong> approved → declined,{' '}
            <strong>{result.declinedToApproved}</strong> declined → approved, {result.unchanged}{' '}
            unchanged.
          </p>
          {result.byRule.length === 0 ? null : (
            <table class="striped">
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col">Code</th>
                  <th scope="col" class="amount">
                    Approved → declined
                  </th>
                  <th scope="col" class="amount">
                    Declined → approved
                  </th>
                </tr>
              </thead>
              <tbody>
                {result.byRule.map((row) => (
                  <tr key={`${row.rule}/${row.declineCode}`}>
                    <td>
                      <code>{row.rule}</code>
                    </td>
                    <td>{row.declineCode}</td>
                    <td class="amount">{row.approvedToDeclined}</td>
                    <td class="amount">{row.declinedToApproved}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {result.examples.length === 0 ? null : (
            <details>
              <summary>Authorizations that would change ({result.examples.length})</summary>
              <ul>
                {result.examples.map((example) => (
                  <li key={example.transactionId}>
                    <code>{example.transactionId}</code> {example.amount} {example.currency}{' '}
                    {example.merchant?.name ?? ''}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      )}
    </article>
  );
}
