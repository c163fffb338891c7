import { useEffect, useState } from 'preact/hooks';
import { api, idempotencyKey, messageOf, query, type Page } from '../api';
import { Alert } from '../components/alert';
import { Time } from '../components/time';
import type { Transaction } from '../types';

/*
 * A vault's pending holds (card authorizations still holding money), each captured (what the
 * network took; the whole hold without an amount) or reversed (released) from here, as the
 * card network's Capture and Reverse would.
 */

export function PendingHolds({ vaultId, onChange }: { vaultId: string; onChange: () => void }) {
  const [holds, setHolds] = useState<Transaction[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [amounts, setAmounts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const load = (): void => {
    api<Page<Transaction>>(
      'GET',
      `/v1/transactions${query({ vaultId, status: 'pending', type: 'card_authorization', limit: 50 })}`,
    )
      .then((page) => {
        setHolds(page.data.filter((transaction) => transaction.heldAmount !== '0.00'));
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(load, [vaultId]);
  const act = async (hold: Transaction, action: 'capture' | 'reverse'): Promise<void> => {
    setBusy(`${hold.id}/${action}`);
    setError(null);
    try {
      const amount = amounts[hold.id]?.trim() ?? '';
      await api('POST', `/v1/authorizations/${hold.id}/${action}`, {
        body: amount === '' ? {} : { amount },
        headers: idempotencyKey(),
      });
      setAmounts({ ...amounts, [hold.id]: '' });
      load();
      onChange();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(null);
    }
  };
  return (
    <section aria-labelledby="holds-title">
      <h2 id="holds-title">Pending holds</h2>
      <Alert message={error} />
      {holds === null ? null : holds.length === 0 ? (
        <p>No pending hold.</p>
      ) : (
        <div class="overflow-auto">
          <table class="striped" data-testid="holds">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Merchant</th>
                <th scope="col" class="amount">
                  Held
                </th>
                <th scope="col">Amount (blank: the whole hold)</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {holds.map((hold) => (
                <tr key={hold.id} data-hold={hold.id}>
                  <td>
                    <Time at={hold.createdAt} />
                  </td>
                  <td>{hold.merchant?.name ?? ''}</td>
                  <td class="amount">
                    {hold.heldAmount} {hold.currency}
                  </td>
                  <td>
                    <input
                      name={`amount-${hold.id}`}
                      inputMode="decimal"
                      aria-label={`Amount to capture or reverse of ${hold.heldAmount} ${hold.currency}`}
                      value={amounts[hold.id] ?? ''}
                      onInput={(event) => {
                        setAmounts({ ...amounts, [hold.id]: event.currentTarget.value });
                      }}
                    />
                  </td>
                  <td class="actions">
                    <button
                      type="button"
                      disabled={busy !== null}
                      aria-busy={busy === `${hold.id}/capture`}
                      onClick={() => void act(hold, 'capture')}
                    >
                      Capture
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy !== null}
                      aria-busy={busy === `${hold.id}/reverse`}
                      onClick={() => void act(hold, 'reverse')}
                    >
                      Reverse
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
