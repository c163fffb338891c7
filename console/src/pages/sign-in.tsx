import { useState } from 'preact/hooks';

/** The key is asked for here and kept in this tab's session storage only. */
export function SignIn({
  onKey,
  error,
}: {
  onKey: (key: string) => Promise<void>;
  error: string | null;
}) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <main class="container sign-in">
      <article>
        <header>
          <h1>spendgate console</h1>
        </header>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setBusy(true);
            void onKey(key.trim()).finally(() => {
              setBusy(false);
            });
          }}
        >
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            autocomplete="off"
            required
            value={key}
            aria-describedby="api-key-help"
            aria-invalid={error === null ? undefined : 'true'}
            onInput={(event) => {
              setKey(event.currentTarget.value);
            }}
          />
          <small id="api-key-help">
            Kept in this tab only (session storage): closing the tab signs you out.
          </small>
          {error === null ? null : (
            <p role="alert" class="error">
              {error}
            </p>
          )}
          <button type="submit" aria-busy={busy}>
            Sign in
          </button>
        </form>
      </article>
    </main>
  );
}
