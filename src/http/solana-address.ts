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
