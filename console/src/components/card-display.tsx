import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Alert } from './alert';
import { can, useSession } from '../session';

/*
 * A card's number and CVV, shown by spendgate's hosted card display in a frame: the console
 * asks for a single-use token (Create Card Display Token: cards:reveal, and the two-factor
 * code when the account has two-factor on) and frames /card-display with it, so the details
 * travel from spendgate to this browser's frame alone and never through the console's code.
 * The page may only be framed by origins the account registered: the console's own origin
 * must be one of them (an account:write key can add it here).
 */

interface DisplayToken {
  url: string;
  expiresAt: string;
}

export function CardDisplay({ cardId }: { cardId: string }) {
  const session = useSession();
  const [origins, setOrigins] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ origins: string[] }>('GET', '/v1/account/display-origins')
      .then((answer) => {
        setOrigins(answer.origins);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  }, []);
  const allowed = origins?.includes(location.origin) === true;
  const allow = async (): Promise<void> => {
    try {
      const answer = await api<{ origins: string[] }>('PUT', '/v1/account/display-origins', {
        body: { origins: [...(origins ?? []), location.origin] },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      setOrigins(answer.origins);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const show = async (): Promise<void> => {
    setError(null);
    try {
      const token = await api<DisplayToken>('POST', `/v1/cards/${cardId}/display-token`, {
        headers: code === '' ? {} : { 'x-two-factor-code': code },
      });
      setUrl(token.url);
    } catch (failure) {
      if (
        failure instanceof ApiError &&
        (failure.code === 'two_factor_required' || failure.code === 'invalid_two_factor_code')
      )
        setNeedsCode(true);
      setError(messageOf(failure));
    }
  };
  if (origins === null) return <Alert message={error} />;
  return (
    <article aria-labelledby="card-display-title" class="card-display">
      <h2 id="card-display-title">Card details</h2>
      {!allowed ? (
        <>
          <p>
            The hosted card display may only be framed by origins the account registered, and this
            console’s origin (<code>{location.origin}</code>) is not one of them.
          </p>
          {can(session, 'account:write') ? (
            <button type="button" class="secondary" onClick={() => void allow()}>
              Allow this console to show card details
            </button>
          ) : (
            <p>Ask for a key with account:write to register it.</p>
          )}
        </>
      ) : url === null ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void show();
          }}
        >
          {needsCode ? (
            <label>
              Two-factor code
              <input
                name="twoFactorCode"
                inputMode="numeric"
                autocomplete="one-time-code"
                pattern="[0-9]{6}"
                value={code}
                onInput={(event) => {
                  setCode(event.currentTarget.value);
                }}
              />
            </label>
          ) : null}
          <button type="submit">Reveal card details</button>
          <small> A link good for one view, for 60 seconds.</small>
        </form>
      ) : (
        <iframe
          title="Card details (hosted by spendgate)"
          src={url}
          class="card-frame"
          referrerpolicy="no-referrer"
          allow="clipboard-write"
        />
      )}
      <Alert message={error} />
    </article>
  );
}
