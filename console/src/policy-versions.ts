import { api, type Page } from './api';

/*
 * A vault's policy as its newest version (List Policy Versions, one row): a vault without a
 * policy is an empty list or a deletion, never a 404 in the browser's console.
 */

interface PolicyVersion {
  version: number;
  document: Record<string, unknown> | null;
  createdAt: string;
}

export async function latestPolicy(vaultId: string): Promise<PolicyVersion | null> {
  const page = await api<Page<PolicyVersion>>(
    'GET',
    `/v1/vaults/${encodeURIComponent(vaultId)}/policy/versions?limit=1`,
  );
  const latest = page.data[0];
  return latest === undefined || latest.document === null ? null : latest;
}
