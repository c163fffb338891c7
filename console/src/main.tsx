import '@picocss/pico/css/pico.min.css';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, forgetKey, messageOf, storedKey, storeKey } from './api';
import { useRoute } from './router';
import { can, Session } from './session';
import type { ApiKeyInfo } from './types';
import { SignIn } from './pages/sign-in';
import { OverviewPage } from './pages/overview';
import { VaultsPage } from './pages/vaults';
import { VaultPage } from './pages/vault';
import { LivePage } from './pages/live';
import { PolicyPage } from './pages/policy';
import { CardsPage } from './pages/cards';
import { WebhooksPage } from './pages/webhooks';

const PAGES = [
  { path: 'overview', label: 'Overview', scope: 'vaults:read' },
  { path: 'vaults', label: 'Vaults', scope: 'vaults:read' },
  { path: 'live', label: 'Live', scope: 'transactions:read' },
  { path: 'cards', label: 'Cards', scope: 'cards:read' },
  { path: 'webhooks', label: 'Webhooks', scope: 'webhooks:write' },
] as const;

function App() {
  const [session, setSession] = useState<ApiKeyInfo | null>(null);
  const [checking, setChecking] = useState(storedKey() !== null);
  const [error, setError] = useState<string | null>(null);

  const signIn = async (key: string): Promise<void> => {
    setError(null);
    try {
      const info = await api<ApiKeyInfo>('GET', '/v1/account/key', { key });
      storeKey(key);
      setSession(info);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setChecking(false);
    }
  };
  useEffect(() => {
    const key = storedKey();
    if (key !== null) void signIn(key);
  }, []);

  if (checking) return <main class="container" aria-busy="true" />;
  if (session === null) return <SignIn onKey={signIn} error={error} />;
  const signOut = (): void => {
    forgetKey();
    setSession(null);
  };
  return (
    <Session.Provider value={session}>
      <Shell session={session} onSignOut={signOut} />
    </Session.Provider>
  );
}

function Shell({ session, onSignOut }: { session: ApiKeyInfo; onSignOut: () => void }) {
  const route = useRoute();
  const allowed = PAGES.filter((page) => can(session, page.scope));
  const current = route[0] ?? allowed[0]?.path ?? '';
  return (
    <>
      <header class="container">
        <nav aria-label="Console">
          <ul>
            <li>
              <strong>spendgate</strong> <span class="mode">{session.mode} mode</span>
            </li>
          </ul>
          <ul>
            {allowed.map((page) => (
              <li key={page.path}>
                <a
                  href={`#/${page.path}`}
                  aria-current={current === page.path ? 'page' : undefined}
                >
                  {page.label}
                </a>
              </li>
            ))}
            <li>
              <button type="button" class="secondary outline" onClick={onSignOut}>
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main class="container">
        <Page route={route} current={current} session={session} />
      </main>
    </>
  );
}

function Page({
  route,
  current,
  session,
}: {
  route: string[];
  current: string;
  session: ApiKeyInfo;
}) {
  const page = PAGES.find((candidate) => candidate.path === current);
  if (page === undefined || !can(session, page.scope)) {
    return <p role="alert">This key has no page here: it lacks the scopes the console reads.</p>;
  }
  const id = route[1];
  if (current === 'vaults' && id !== undefined) {
    return route[2] === 'policy' ? <PolicyPage vaultId={id} /> : <VaultPage vaultId={id} />;
  }
  if (current === 'overview') return <OverviewPage />;
  if (current === 'vaults') return <VaultsPage />;
  if (current === 'live') return <LivePage />;
  if (current === 'cards') return <CardsPage />;
  return <WebhooksPage />;
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
