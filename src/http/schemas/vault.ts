import { z } from 'zod';
import { CURRENCY_CODES } from '../../core/index.js';
import {
  amountInput,
  metadataInput,
  moneyOutput,
  pageLimit,
  paginationQuery,
  text,
  timestampOutput,
  metadataChangesInput,
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
    depositAddress: z.string().nullable().meta({
      description:
        'The Solana address that funds this vault: send its currency (USDC or SOL) there. Null only for a vault made before deposit addresses, until the deposit watcher gives it one.',
    }),
    overdrawnAt: timestampOutput.nullable().meta({
      description:
        'Since when `available` has been below 0: a posting the network mandates (a capture above its hold, a late capture, a force capture, an approved advice) was recorded though it overdrew the vault. Every authorization declines `insufficient_balance` until available is back at 0 or above; then null again (`vault.restored`).',
    }),
  })
  .meta({ id: 'Vault' });

export const createVaultBody = z.strictObject({
  name: text(1, 100),
  // Checked against the registry in the handler, so an unknown one is `invalid_currency`.
  currency: text(1, 16),
  network: text(1, 32),
  initialDeposit: amountInput.optional(),
  metadata: metadataInput.optional(),
});

export const listVaultsQuery = z.strictObject({
  ...paginationQuery,
  currency: currencyCode.optional(),
  status: vaultStatus.optional(),
});

export const updateVaultBody = z.strictObject({
  name: text(1, 100).optional(),
  metadata: metadataChangesInput.optional(),
});

// A POST without a body reaches the handler as null.
export const freezeVaultBody = z.strictObject({ reason: text(1, 200).optional() }).nullish();

export const closeVaultBody = z
  .strictObject({
    destination: z
      .union([z.strictObject({ vaultId: text(1, 64) }), z.strictObject({ address: text(1, 64) })])
      .optional(),
  })
  .nullish();

export const balanceObject = z
  .object({
    object: z.literal('balance'),
    vaultId: z.string(),
    currency: currencyCode,
    available: moneyOutput,
    pending: moneyOutput,
    ledger: moneyOutput,
    asOf: timestampOutput,
  })
  .meta({ id: 'Balance' });

const isoDay = z.iso.date({ error: 'must be a date, YYYY-MM-DD' });

export const balanceHistoryQuery = z.strictObject({
  limit: pageLimit,
  /** A day: the next page holds the days before it (snapshots have no id). */
  startingAfter: isoDay.optional(),
  startDate: isoDay.optional().meta({ description: 'A UTC day, YYYY-MM-DD, inclusive.' }),
  endDate: isoDay
    .optional()
    .meta({ description: 'A UTC day, YYYY-MM-DD, inclusive (today included).' }),
});

export const balanceSnapshotObject = z
  .object({
    object: z.literal('balance_snapshot'),
    vaultId: z.string(),
    date: z.string(),
    currency: currencyCode,
    ledger: moneyOutput,
    available: moneyOutput,
    pending: moneyOutput,
    final: z.boolean().meta({
      description:
        'true: the end-of-day balances of a past UTC day. false: today, the balances as they ' +
        'are now; the row changes until the day ends and its snapshot is taken.',
    }),
  })
  .meta({
    id: 'BalanceSnapshot',
    description:
      "A vault's balances on one UTC day. Get Balance History lists them newest day first: " +
      "today's live figures (final: false) first when the range includes today, then the " +
      'end-of-day snapshots of past days.',
  });

export const listDepositsQuery = z.strictObject({ ...paginationQuery });

export const chainDepositObject = z
  .object({
    id: z.string(),
    object: z.literal('chain_deposit'),
    vaultId: z.string(),
    status: z.enum(['credited', 'swept', 'ignored']).meta({
      description:
        'credited: the vault was credited (a completed deposit transaction); swept: credited, and since moved into the treasury; ignored: never credited (see ignoredReason).',
    }),
    ignoredReason: z
      .enum(['other_mint', 'other_currency', 'below_minimum', 'vault_closed'])
      .nullable()
      .meta({
        description:
          'Why an ignored transfer was not credited: a token of another mint, SOL to a USDC vault (or USDC to a SOL vault), less than the minimum (0.01 USDC, 0.001 SOL), or a closed vault.',
      }),
    currency: currencyCode.meta({ description: "The vault's currency." }),
    mint: z.string().nullable().meta({ description: "The token's mint; null for SOL." }),
    amount: z.string().meta({ description: "Exact, in the transferred token's own units." }),
    signature: z.string(),
    instructionIndex: z.number().int(),
    innerIndex: z.number().int().meta({ description: '-1 for an outer instruction.' }),
    slot: z.number().int(),
    sender: z.string(),
    transactionId: z
      .string()
      .nullable()
      .meta({ description: 'The completed deposit transaction; null when ignored.' }),
    foundAt: timestampOutput,
    creditedAt: timestampOutput.nullable(),
    sweptAt: timestampOutput.nullable(),
  })
  .meta({
    id: 'ChainDeposit',
    description:
      "A transfer found on chain at the vault's deposit address, once finalized: credited once, or ignored with its reason.",
  });
