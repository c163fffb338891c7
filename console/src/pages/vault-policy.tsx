import { useEffect, useState } from 'preact/hooks';
import { api, idempotencyKey, messageOf, type Page } from '../api';
import { Alert } from '../components/alert';
import { Time } from '../components/time';
import { can, useSession } from '../session';
import type { PolicyVersion } from '../types';

/*
 * A vault's policy on its page: the current document as it is stored, and its versions (Set,
 * Delete, Restore), any earlier one restorable (Restore Policy Version) with policies:write.
 */

const VERSIONS_SHOWN = 20;

const CHANGE_WORDS: Record<PolicyVersion['change'], string> = {
  set: 'set',
  delete: 'deleted',
  restore: 'restored',
};

export function VaultPolicy({ vaultId }: { vaultId: string }) {
  const session = useSession();
  const [versions, setVersions] = useState<PolicyVersion[] | null>(null);
  const [shown, setShown] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const load = (): void => {
    api<Page<PolicyVersion>>(
      'GET',
      `/v1/vaults/${encodeURIComponent(vaultId)}/policy/versions?limit=${String(VERSIONS_SHOWN)}`,
    )
      .then((page) => {
        setVersions(page.data);
      })
      .catch((failure: unknown) => {
        setError(messageOf(failure));
      });
  };
  useEffect(load, [vaultId]);
  const restore = async (version: number): Promise<void> => {
    if (!confirm(`Restore version ${String(version)} as the vault's policy?`)) return;
    setError(null);
    try {
      const policy = await api<{ version: number }>(
        'POST',
        `/v1/vaults/${encodeURIComponent(vaultId)}/policy/versions/${String(version)}/restore`,
        { headers: idempotencyKey() },
      );
      setStatus(`Version ${String(version)} restored as version ${String(policy.version)}.`);
      setShown(null);
      load();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const current = versions?.[0];
  const writable = can(session, 'policies:write');
  const open = versions?.find((version) => version.version === shown);
  return (
    <>
      <Alert message={error} />
      {status === null ? null : (
        <p role="status" class="ok">
          {status}
        </p>
      )}
      {versions === null ? (
        <p aria-busy="true">Loading the policy…</p>
      ) : current === undefined || current.document === null ? (
        <p>No policy: every authorization within the balance is approved.</p>
      ) : (
        <>
          <p>
            Version {current.version}, since <Time at={current.createdAt} />.
          </p>
          <pre class="policy" data-testid="policy-document">
            <code>{JSON.stringify(current.document, null, 2)}</code>
          </pre>
        </>
      )}
      {versions === null || versions.length === 0 ? null : (
        <details>
          <summary>Version history</summary>
          <table class="striped" data-testid="policy-versions">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Change</th>
                <th scope="col">When</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((version) => (
                <tr key={version.version} data-version={version.version}>
                  <td>{version.version}</td>
                  <td>
                    {CHANGE_WORDS[version.change]}
                    {version.restoredFrom === null
                      ? ''
                      : ` from version ${String(version.restoredFrom)}`}
                  </td>
                  <td>
                    <Time at={version.createdAt} />
                  </td>
                  <td class="actions">
                    {version.document === null ? null : (
                      <button
                        type="button"
                        class="secondary outline"
                        aria-expanded={shown === version.version}
                        onClick={() => {
                          setShown(shown === version.version ? null : version.version);
                        }}
                      >
                        {shown === version.version ? 'Hide' : 'Show'} version {version.version}
                      </button>
                    )}
                    {writable && version !== current && version.document !== null ? (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => void restore(version.version)}
                      >
                        Restore version {version.version}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {open?.document === null || open === undefined ? null : (
            <pre class="policy" data-testid="policy-version-document">
              <code>{JSON.stringify(open.document, null, 2)}</code>
            </pre>
          )}
        </details>
      )}
    </>
  );
}
