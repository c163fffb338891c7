import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiKeyInfo } from './types';

/** The signed-in key's mode and scopes: each page shows only what they allow. */
export const Session = createContext<ApiKeyInfo | null>(null);

export function useSession(): ApiKeyInfo {
  const session = useContext(Session);
  if (session === null) throw new Error('useSession outside a signed-in console');
  return session;
}

export function can(session: ApiKeyInfo, scope: string): boolean {
  return session.scopes.includes(scope);
}
