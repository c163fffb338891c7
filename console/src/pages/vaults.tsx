import { useEffect, useState } from 'preact/hooks';
import { api, idempotencyKey, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { CreatePanel } from '../components/create-panel';
import { go } from '../router';
import { can, useSession } from '../session';
import type { Vault } from '../types';

/** Vaults: the first 100 with their balances; a new one (vaults:write). */
export function VaultsPage() {
  const session = useSession();
  const [vaults, setVaults] = useState<Vault[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = (): void => {
    api<Page<Vault>>('GET', '/v1/vaults?limit=100')
      .then((page) => {
        setVaults(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(load, []);
  return (
    <section aria-labelledby="vaults-title">
      <h1 id="vaults-title">Vaults</h1>
      <Alert message={error} />
      {vaults === null ? (
        <p aria-busy="true">Loading vaults…</p>
      ) : (
        <div class="overflow-auto">
          <table class="striped">
            <caption class="visually-hidden">Vaults and their balances</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
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
              {vaults.length === 0 ? (
                <tr>
                  <td colSpan={5}>No vault yet.</td>
                </tr>
              ) : null}
              {vaults.map((vault) => (
                <tr key={vault.id}>
                  <td>
                    <a href={`#/vaults/${vault.id}`}>{vault.name}</a>
                  </td>
                  <td>{vault.status}</td>
                  <td class="amount">
                    {vault.balance.available} {vault.currency}
                  </td>
                  <td class="amount">{vault.balance.pending}</td>
                  <td class="amount">{vault.balance.ledger}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {can(session, 'vaults:write') ? <NewVault testMode={session.mode === 'test'} /> : null}
    </section>
  );
}

function NewVault({ testMode }: { testMode: boolean }) {
  const [name, setName] = useState('');
  const [currency, setCurrency] = useState('USDC');
  const [deposit, setDeposit] = useState('');
  const create = async (): Promise<void> => {
    const vault = await api<Vault>('POST', '/v1/vaults', {
      body: { name, currency, network: 'solana' },
      headers: idempotencyKey(),
    });
    // Test mode's stand-in for a chain deposit, so that a new vault has money to spend.
    if (testMode && deposit.trim() !== '') {
      await api('POST', '/v1/simulate/deposits', {
        body: { vaultId: vault.id, amount: deposit.trim() },
        headers: idempotencyKey(),
      });
    }
    go(`vaults/${vault.id}`);
  };
  return (
    <CreatePanel summary="New vault" submit="Create vault" create={create}>
      <label>
        Name
        <input
          name="name"
          required
          maxLength={100}
          value={name}
          onInput={(event) => {
            setName(event.currentTarget.value);
          }}
        />
      </label>
      <label>
        Currency
        <select
          name="currency"
          value={currency}
          onChange={(event) => {
            setCurrency(event.currentTarget.value);
          }}
        >
          <option value="USDC">USDC</option>
          <option value="SOL">SOL</option>
        </select>
      </label>
      {testMode ? (
        <label>
          Test deposit (optional)
          <input
            name="deposit"
            inputMode="decimal"
            pattern="[0-9]+(\.[0-9]+)?"
            value={deposit}
            onInput={(event) => {
              setDeposit(event.currentTarget.value);
            }}
          />
        </label>
      ) : null}
    </CreatePanel>
  );
}
