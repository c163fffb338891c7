import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../api';
import { Alert } from './alert';

/**
 * A "New ..." form folded under its button (vaults, cards, webhooks): its fields in a grid,
 * `create` run on submit with the button busy meanwhile, and a failure shown under the fields
 * in the API's words. `after` follows the form (a secret shown once, say).
 */
export function CreatePanel(props: {
  summary: string;
  submit: string;
  create: () => Promise<void>;
  children: ComponentChildren;
  after?: ComponentChildren;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await props.create();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details>
      <summary role="button" class="secondary">
        {props.summary}
      </summary>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <div class="grid">{props.children}</div>
        <Alert message={error} />
        <button type="submit" aria-busy={busy}>
          {props.submit}
        </button>
      </form>
      {props.after}
    </details>
  );
}
