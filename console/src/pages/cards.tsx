import { useEffect, useState } from 'preact/hooks';
import { api, idempotencyKey, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { CardDisplay } from '../components/card-display';
import { CreatePanel } from '../components/create-panel';
import { useRoute } from '../router';
import { can, useSession } from '../session';
import type { Card, Vault } from '../types';

/** Cards: create one on a vault, freeze, unfreeze or cancel it, show its details (hosted page). */
export function CardsPage() {
  const session = useSession();
  const route = useRoute();
  const [cards, setCards] = useState<Card[] | null>(null);
  const [vaults, setVaults] = useState<Vault[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  // A card named in the address (#/cards/card_...: the vault page's links) is marked.
  const named = route[1];
  const load = (): void => {
    api<Page<Card>>('GET', '/v1/cards?limit=100')
      .then((page) => {
        setCards(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(() => {
    load();
    if (can(session, 'vaults:read')) {
      // Every vault, closed ones included: each card's row names its vault.
      api<Page<Vault>>('GET', '/v1/vaults?limit=100')
        .then((page) => {
          setVaults(page.data);
        })
        .catch(() => undefined);
    }
  }, []);
  const act = async (card: Card, action: 'freeze' | 'unfreeze' | 'cancel'): Promise<void> => {
    if (
      action === 'cancel' &&
      !confirm(`Cancel the card ending ${card.last4}? This cannot be undone.`)
    )
      return;
    setError(null);
    try {
      await api('POST', `/v1/cards/${card.id}/${action}`, { headers: idempotencyKey() });
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const writable = can(session, 'cards:write');
  const active = vaults.filter((vault) => vault.status === 'active');
  const names = new Map(vaults.map((vault) => [vault.id, vault.name]));
  return (
    <section aria-labelledby="cards-title">
      <h1 id="cards-title">Cards</h1>
      <Alert message={error} />
      {writable && active.length > 0 ? <NewCard vaults={active} onCreated={load} /> : null}
      {cards === null ? (
        <p aria-busy="true">Loading cards…</p>
      ) : (
        <div class="overflow-auto">
          <table class="striped">
            <thead>
              <tr>
                <th scope="col">Card</th>
                <th scope="col">Cardholder</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {cards.length === 0 ? (
                <tr>
                  <td colSpan={5}>No card yet.</td>
                </tr>
              ) : null}
              {cards.map((card) => (
                <tr
                  key={card.id}
                  data-card={card.id}
                  class={card.id === named ? 'named' : undefined}
                  aria-current={card.id === named ? 'true' : undefined}
                >
                  <td>
                    •••• {card.last4}
                    <br />
                    <small>
                      <a href={`#/vaults/${card.vaultId}`}>
                        {names.get(card.vaultId) ?? card.vaultId}
                      </a>
                    </small>
                  </td>
                  <td>{card.cardholderName}</td>
                  <td>{card.status}</td>
                  <td>
                    {String(card.expMonth).padStart(2, '0')}/{card.expYear}
                  </td>
                  <td class="actions">
                    {writable && card.status === 'active' ? (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => void act(card, 'freeze')}
                      >
                        Freeze
                      </button>
                    ) : null}
                    {writable && card.status === 'frozen' ? (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => void act(card, 'unfreeze')}
                      >
                        Unfreeze
                      </button>
                    ) : null}
                    {writable && card.status !== 'cancelled' ? (
                      <button
                        type="button"
                        class="secondary outline"
                        onClick={() => void act(card, 'cancel')}
                      >
                        Cancel
                      </button>
                    ) : null}
                    {can(session, 'cards:reveal') && card.status !== 'cancelled' ? (
                      <button
                        type="button"
                        aria-expanded={shown === card.id}
                        onClick={() => {
                          setShown(shown === card.id ? null : card.id);
                        }}
                      >
                        {shown === card.id ? 'Hide details' : 'Show details'}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown === null ? null : <CardDisplay cardId={shown} />}
    </section>
  );
}

function NewCard({ vaults, onCreated }: { vaults: Vault[]; onCreated: () => void }) {
  const [vaultId, setVaultId] = useState(vaults[0]?.id ?? '');
  const [name, setName] = useState('');
  const create = async (): Promise<void> => {
    await api('POST', '/v1/cards', {
      body: { vaultId, cardholderName: name },
      headers: idempotencyKey(),
    });
    setName('');
    onCreated();
  };
  return (
    <CreatePanel summary="New card" submit="Create card" create={create}>
      <label>
        Vault
        <select
          name="vaultId"
          value={vaultId}
          onChange={(event) => {
            setVaultId(event.currentTarget.value);
          }}
        >
          {vaults.map((vault) => (
            <option key={vault.id} value={vault.id}>
              {vault.name} ({vault.currency})
            </option>
          ))}
        </select>
      </label>
      <label>
        Cardholder name
        <input
          name="cardholderName"
          required
          maxLength={100}
          value={name}
          onInput={(event) => {
            setName(event.currentTarget.value);
          }}
        />
      </label>
    </CreatePanel>
  );
}
