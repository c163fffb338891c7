import bs58 from 'bs58';
import { SpendgateError } from '../core/index.js';

/** Solana public keys are 32 bytes; base58 writes them in 32 to 44 characters. */
const ADDRESS_BYTES = 32;
const ADDRESS_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** Refuses anything but a base58 Solana address of 32 bytes with `invalid_address` (contract section 12). */
export function solanaAddress(value: string, param: string): string {
  if (ADDRESS_PATTERN.test(value)) {
    try {
      if (bs58.decode(value).length === ADDRESS_BYTES) return value;
    } catch {
      // Not base58 after all: refused below.
    }
  }
  throw new SpendgateError(
    'invalid_address',
    `${param} must be a base58 Solana address of 32 bytes.`,
    param,
  );
}

/**
 * Contract section 12: live mode sends through SOLANA_RPC_URL and refuses what would go on
 * chain (external transfers, closing a vault to an address) with 503 while it is unset. Test
 * mode always has its chain (a local runtime by default).
 */
export function assertChainAvailable(mode: 'test' | 'live', solanaRpcUrl: string | null): void {
  if (mode === 'live' && solanaRpcUrl === null) {
    throw new SpendgateError(
      'service_unavailable',
      'Live transfers to Solana are unavailable: no Solana cluster is configured.',
    );
  }
}
