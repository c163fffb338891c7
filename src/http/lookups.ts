import { SpendgateError, type Scope } from '../core/index.js';
import type { Store } from '../store/store.js';

/** The caller's vault, refused as not found at `param`, the body field that named it. */
export async function vaultAt(store: Store, scope: Scope, vaultId: string, param: string) {
  try {
    return await store.getVault(scope, vaultId);
  } catch (error) {
    if (error instanceof SpendgateError && error.code === 'vault_not_found') {
      throw new SpendgateError('vault_not_found', error.message, param);
    }
    throw error;
  }
}
