import { z } from 'zod';
import { CURRENCY_CODES } from '../../core/index.js';
import {
  amountInput,
  metadataInput,
  moneyOutput,
  paginationQuery,
  timestampOutput,
} from './common.js';

const currencyCode = z.enum(CURRENCY_CODES as [string, ...string[]]);
const vaultStatus = z.enum(['active', 'frozen', 'closed']);

export const vaultObject = z
  .object({
    id: z.string(),
    object: z.literal('vault'),
    name: z.string(),
    currency: currencyCode,
    network: z.literal('solana'),
    status: vaultStatus,
    balance: z.object({ available: moneyOutput, pending: moneyOutput, ledger: moneyOutput }),
    metadata: z.record(z.string(), z.string()),
    createdAt: timestampOutput,
    updatedAt: timestampOutput,
    frozenAt: timestampOutput.nullable(),
    closedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'Vault' });

export const createVaultBody = z.strictObject({
  name: z.string().min(1).max(100),
  // Checked against the registry in the handler, so an unknown one is `invalid_currency`.
  currency: z.string().min(1).max(16),
  network: z.string().min(1).max(32),
  initialDeposit: amountInput.optional(),
  metadata: metadataInput.optional(),
});

export const listVaultsQuery = z.strictObject({
  ...paginationQuery,
  currency: currencyCode.optional(),
  status: vaultStatus.optional(),
});
