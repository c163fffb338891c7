import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, idempotencyKey, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { PolicyText } from '../components/policy-text';
import { checkPolicy, lineOfPath, pathOfParam, type Problem } from '../policy-check';
import { latestPolicy } from '../policy-versions';
import { can, useSession } from '../session';
import type { Vault } from '../types';
import { BacktestPanel, SimulatePanel } from './policy-trials';

/*
 * The policy editor: the vault's policy as JSON, checked on every keystroke by the API's own
 * policy validator, in its words (problems on their lines), templates from the rule library, a simulated
 * purchase and a backtest of the draft, and Save (Set Policy) once it is right.
 */

interface Template {
  name: string;
  description: string;
  example: { policy: { templates: unknown[] } };
}

export function PolicyPage({ vaultId }: { vaultId: string }) {
  const session = useSession();
  const [text, setText] = useState<string | null>(null);
  const [version, setVersion] = useState<number | null>(null);
  const [templates, setTemplates] = useState<Template[]>([]);
  const [serverProblems, setServerProblems] = useState<Problem[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [vaultName, setVaultName] = useState<string | null>(null);

  useEffect(() => {
    api<Vault>('GET', `/v1/vaults/${encodeURIComponent(vaultId)}`)
      .then((vault) => {
        setVaultName(vault.name);
      })
      .catch(() => undefined);
    latestPolicy(vaultId)
      .then((latest) => {
        setVersion(latest?.version ?? null);
        setText(JSON.stringify(latest?.document ?? { rules: [] }, null, 2));
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
    api<Page<Template>>('GET', '/v1/rule-templates?limit=100')
      .then((page) => {
        setTemplates(page.data);
      })
      .catch(() => undefined);
  }, [vaultId]);

  const checked = useMemo(
    () => (text === null ? { problems: [], value: undefined } : checkPolicy(text)),
    [text],
  );
  const problems = [...checked.problems, ...serverProblems];
  const edit = (next: string): void => {
    setText(next);
    setServerProblems([]);
    setSaved(null);
  };
  /** A refusal of the server, on its line when its `param` names a place. */
  const refused = (failure: unknown): void => {
    if (failure instanceof ApiError && failure.param !== null && text !== null) {
      setServerProblems([
        {
          line: lineOfPath(text, pathOfParam(failure.param)),
          message: `${failure.message} (${failure.code})`,
        },
      ]);
    } else setError(messageOf(failure));
  };
  const save = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      const policy = await api<{ version: number }>('PUT', `/v1/vaults/${vaultId}/policy`, {
        body: checked.value,
        headers: idempotencyKey(),
      });
      setVersion(policy.version);
      setSaved(`Saved as version ${String(policy.version)}.`);
    } catch (failure) {
      refused(failure);
    } finally {
      setBusy(false);
    }
  };
  const addTemplate = (name: string): void => {
    const template = templates.find((candidate) => candidate.name === name);
    if (template === undefined || checked.value === undefined || typeof checked.value !== 'object')
      return;
    const draft = checked.value as { templates?: unknown[] };
    const next = {
      ...draft,
      templates: [...(draft.templates ?? []), ...template.example.policy.templates],
    };
    edit(JSON.stringify(next, null, 2));
  };

  if (text === null) return <p aria-busy="true">Loading the policy…</p>;
  const ready = checked.value !== undefined && checked.problems.length === 0;
  return (
    <section aria-labelledby="policy-editor-title">
      <nav aria-label="Breadcrumb">
        <ul>
          <li>
            <a href="#/vaults">Vaults</a>
          </li>
          <li>
            <a href={`#/vaults/${vaultId}`}>{vaultName ?? vaultId}</a>
          </li>
          <li>Policy</li>
        </ul>
      </nav>
      <h1 id="policy-editor-title">Policy editor</h1>
      <p>
        {version === null
          ? 'This vault has no policy yet.'
          : `Current version: ${String(version)}.`}
      </p>
      <label>
        Add a template from the rule library
        <select
          name="template"
          value=""
          disabled={!ready}
          onChange={(event) => {
            addTemplate(event.currentTarget.value);
          }}
        >
          <option value="">Choose a template…</option>
          {templates.map((template) => (
            <option key={template.name} value={template.name} title={template.description}>
              {template.name}
            </option>
          ))}
        </select>
      </label>
      <PolicyText text={text} problems={problems} onText={edit} />
      <Alert message={error} />
      {saved === null ? null : (
        <p role="status" class="ok">
          {saved}
        </p>
      )}
      {can(session, 'policies:write') ? (
        <button
          type="button"
          disabled={!ready || busy}
          aria-busy={busy}
          onClick={() => void save()}
        >
          Save policy
        </button>
      ) : (
        <p>This key cannot save policies (it lacks policies:write).</p>
      )}
      <SimulatePanel
        vaultId={vaultId}
        draft={ready ? checked.value : undefined}
        onRefused={refused}
      />
      {can(session, 'transactions:read') ? (
        <BacktestPanel
          vaultId={vaultId}
          draft={ready ? checked.value : undefined}
          onRefused={refused}
        />
      ) : null}
    </section>
  );
}
