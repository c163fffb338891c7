import { useEffect, useState } from 'preact/hooks';
import { api, idempotencyKey, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { CreatePanel } from '../components/create-panel';
import { Time } from '../components/time';
import type { WebhookDelivery, WebhookEndpoint, WebhookTest } from '../types';

/** Deliveries read for an endpoint's health: the newest ones say whether it works now. */
const HEALTH_DELIVERIES = 20;

/**
 * An endpoint's health from its newest deliveries: `enabled` says only that spendgate sends to
 * it, not that anything arrives. Failing when the newest delivery failed: how many in a row,
 * and the last error.
 */
export function healthOf(deliveries: readonly WebhookDelivery[]): {
  failing: boolean;
  text: string;
} {
  const newest = deliveries[0];
  if (newest === undefined) return { failing: false, text: 'no delivery yet' };
  if (newest.status === 'succeeded') return { failing: false, text: 'delivering' };
  const failed = deliveries.findIndex((delivery) => delivery.status === 'succeeded');
  const count = failed === -1 ? deliveries.length : failed;
  const every = failed === -1 && deliveries.length < HEALTH_DELIVERIES ? 'all ' : 'last ';
  const error = `${newest.error ?? 'failed'}${newest.statusCode === null ? '' : ` (HTTP ${String(newest.statusCode)})`}`;
  return {
    failing: true,
    text: `failing: ${every}${String(count)} ${count === 1 ? 'delivery' : 'deliveries'} failed, last error ${error}`,
  };
}

function Health({ endpointId, version }: { endpointId: string; version: number }) {
  const [health, setHealth] = useState<{ failing: boolean; text: string } | null>(null);
  useEffect(() => {
    api<Page<WebhookDelivery>>(
      'GET',
      `/v1/webhooks/${endpointId}/deliveries?limit=${String(HEALTH_DELIVERIES)}`,
    )
      .then((page) => {
        setHealth(healthOf(page.data));
      })
      .catch(() => undefined);
  }, [endpointId, version]);
  if (health === null) return null;
  return (
    <strong class={health.failing ? 'failing' : 'ok'} data-testid="endpoint-health">
      {health.text}
    </strong>
  );
}

/** Webhooks: the endpoints, a new one, each one's delivery log, and Test Webhook. */
export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Bumped by a test delivery: the endpoints' health is read again.
  const [version, setVersion] = useState(0);
  const load = (): void => {
    api<Page<WebhookEndpoint>>('GET', '/v1/webhooks')
      .then((page) => {
        setEndpoints(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(load, []);
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <Alert message={error} />
      <NewEndpoint onCreated={load} />
      {endpoints === null ? (
        <p aria-busy="true">Loading endpoints…</p>
      ) : endpoints.length === 0 ? (
        <p>No endpoint yet.</p>
      ) : (
        endpoints.map((endpoint) => (
          <article key={endpoint.id} data-endpoint={endpoint.id}>
            <header>
              <code class="url">{endpoint.url}</code> · {endpoint.status} ·{' '}
              <Health endpointId={endpoint.id} version={version} /> · {endpoint.events.join(', ')}
            </header>
            <button
              type="button"
              class="secondary"
              aria-expanded={open === endpoint.id}
              onClick={() => {
                setOpen(open === endpoint.id ? null : endpoint.id);
              }}
            >
              {open === endpoint.id ? 'Hide deliveries' : 'Deliveries'}
            </button>
            {open === endpoint.id ? (
              <Deliveries
                endpointId={endpoint.id}
                onTested={() => {
                  setVersion(version + 1);
                }}
              />
            ) : null}
          </article>
        ))
      )}
    </section>
  );
}

function NewEndpoint({ onCreated }: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<string | null>(null);
  const create = async (): Promise<void> => {
    const created = await api<{ secret: string }>('POST', '/v1/webhooks', {
      body: {
        url,
        events: events
          .split(',')
          .map((event) => event.trim())
          .filter(Boolean),
      },
      headers: idempotencyKey(),
    });
    // Shown once, as the API answers it once: the receiver needs it to check signatures.
    setSecret(created.secret);
    setUrl('');
    onCreated();
  };
  return (
    <CreatePanel
      summary="New endpoint"
      submit="Create endpoint"
      create={create}
      after={
        secret === null ? null : (
          <p role="status">
            Signing secret (shown once): <code>{secret}</code>
          </p>
        )
      }
    >
      <label>
        URL
        <input
          name="url"
          type="url"
          required
          value={url}
          onInput={(event) => {
            setUrl(event.currentTarget.value);
          }}
        />
      </label>
      <label>
        Events (comma-separated, * for all)
        <input
          name="events"
          required
          value={events}
          onInput={(event) => {
            setEvents(event.currentTarget.value);
          }}
        />
      </label>
    </CreatePanel>
  );
}

/** What Test Webhook answered, with the API's reason when nothing was delivered. */
export function testResultText(answer: WebhookTest): string {
  if (answer.delivered) {
    return `Delivered: ${String(answer.statusCode)} in ${String(answer.durationMs)} ms.`;
  }
  const status = answer.statusCode === null ? '' : ` (HTTP ${String(answer.statusCode)})`;
  return `Not delivered: ${answer.error ?? 'no reason given'}${status} after ${String(answer.durationMs)} ms.`;
}

function Deliveries({ endpointId, onTested }: { endpointId: string; onTested: () => void }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = (): void => {
    api<Page<WebhookDelivery>>('GET', `/v1/webhooks/${endpointId}/deliveries?limit=50`)
      .then((page) => {
        setDeliveries(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(load, [endpointId]);
  const test = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api<WebhookTest>('POST', `/v1/webhooks/${endpointId}/test`, {
        headers: idempotencyKey(),
      });
      setResult(testResultText(answer));
      load();
      onTested();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      <button type="button" onClick={() => void test()} aria-busy={busy} disabled={busy}>
        Test webhook
      </button>
      {result === null ? null : (
        <p role="status" data-testid="webhook-test">
          {result}
        </p>
      )}
      <Alert message={error} />
      {deliveries === null ? null : (
        <div class="overflow-auto">
          <table class="striped" data-testid="deliveries">
            <caption>Delivery log</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col" class="amount">
                  HTTP
                </th>
                <th scope="col" class="amount">
                  Latency
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.length === 0 ? (
                <tr>
                  <td colSpan={6}>No delivery yet.</td>
                </tr>
              ) : null}
              {deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <Time at={delivery.createdAt} />
                  </td>
                  <td>{delivery.eventType}</td>
                  <td>{delivery.attempt}</td>
                  <td>
                    {delivery.status}
                    {delivery.error === null ? '' : ` (${delivery.error})`}
                  </td>
                  <td class="amount">{delivery.statusCode ?? '—'}</td>
                  <td class="amount">
                    {delivery.durationMs === null ? '—' : `${String(delivery.durationMs)} ms`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
