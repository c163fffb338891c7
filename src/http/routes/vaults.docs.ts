import type { OperationDoc } from '../operation-docs/doc.js';
import { ERROR_EXAMPLES } from '../operation-docs/error-examples.js';
import {
  DEPOSIT_ID,
  EXAMPLE_ADDRESS,
  IDEMPOTENT,
  LATER,
  NEW_VAULT,
  OTHER_VAULT_ID,
  PAGINATION,
  VAULT,
  VAULT_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the vaults operations, by operationId. */
export const VAULTS_DOCS = {
  createVault: {
    summary: 'Create a vault',
    description:
      'A vault holds one currency (USDC or SOL, both on the `solana` network) and is what cards ' +
      'spend from. `initialDeposit` above 0 is for test mode only: a live vault starts empty ' +
      'and is funded on chain at its `depositAddress` or by a transfer from another vault. `metadata`: at most 50 keys of 1-40 ' +
      'characters, values of at most 500.',
    returns: 'The vault created.',
    errors: [
      ...IDEMPOTENT,
      'invalid_currency',
      'invalid_amount',
      {
        code: 'parameter_invalid',
        message: 'SOL vaults are on the solana network.',
        param: 'network',
      },
    ],
    example: NEW_VAULT,
    requestExample: {
      name: 'Marketing',
      currency: 'USDC',
      network: 'solana',
      initialDeposit: '5000',
      metadata: { costCenter: 'cc-104' },
    },
  },
  listVaults: {
    summary: 'List vaults',
    description: `The vaults of the key's account and mode, optionally by currency or status. ${PAGINATION}`,
    returns: 'A page of vaults.',
    errors: [],
    example: list([VAULT], VAULT_ID),
  },
  retrieveVault: {
    summary: 'Retrieve a vault',
    description: 'A vault with its balance: `available` = `ledger` − `pending` (open card holds).',
    returns: 'The vault.',
    errors: ['vault_not_found'],
    example: VAULT,
  },
  updateVault: {
    summary: 'Update a vault',
    description:
      'Renames a vault or changes its metadata: given keys are set, a key set to `null` is ' +
      'removed, others are kept. A closed vault cannot be changed.',
    returns: 'The vault, updated.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, name: 'Marketing EMEA', updatedAt: LATER },
    requestExample: { name: 'Marketing EMEA', metadata: { costCenter: null, region: 'emea' } },
  },
  freezeVault: {
    summary: 'Freeze a vault',
    description:
      'Stops all money movement: card authorizations are declined and transfers refused until ' +
      'the vault is unfrozen. Freezing a frozen vault changes nothing.',
    returns: 'The vault, frozen.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, status: 'frozen', updatedAt: LATER, frozenAt: LATER },
    requestExample: { reason: 'Quarterly audit' },
  },
  unfreezeVault: {
    summary: 'Unfreeze a vault',
    description: 'Lets money move again. Unfreezing an active vault changes nothing.',
    returns: 'The vault, active.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'vault_closed'],
    example: { ...VAULT, updatedAt: LATER },
  },
  closeVault: {
    summary: 'Close a vault',
    description:
      'Closes a vault for good and cancels its cards. A vault with open holds cannot close ' +
      '(capture or reverse them first); one with a balance needs a `destination`: another ' +
      'active vault of the same currency (`vaultId`), or a Solana address (`address`), which ' +
      'in live mode needs a configured Solana cluster (503 otherwise).',
    returns: 'The vault, closed, its balance moved out.',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      'vault_closed',
      'vault_has_pending_transactions',
      {
        code: 'parameter_missing',
        message: 'A vault with a balance needs a destination to close.',
        param: 'destination',
      },
      {
        code: 'vault_frozen',
        message: `Vault ${OTHER_VAULT_ID} is frozen.`,
        param: 'destination.vaultId',
      },
      {
        code: 'currency_mismatch',
        message: 'The destination vault holds another currency.',
        param: 'destination.vaultId',
      },
      { ...ERROR_EXAMPLES.invalid_address, code: 'invalid_address', param: 'destination.address' },
    ],
    example: {
      ...VAULT,
      status: 'closed',
      balance: { available: '0.00', pending: '0.00', ledger: '0.00' },
      updatedAt: LATER,
      closedAt: LATER,
    },
    requestExample: { destination: { vaultId: OTHER_VAULT_ID } },
  },
  getVaultBalance: {
    summary: "Retrieve a vault's balance",
    description:
      'The balance now: `ledger` is what the vault holds, `pending` what open card holds and ' +
      'pending external transfers reserve, `available` = `ledger` − `pending`, what it can ' +
      'still spend.',
    returns: 'The balance.',
    errors: ['vault_not_found'],
    example: {
      object: 'balance',
      vaultId: VAULT_ID,
      currency: 'USDC',
      available: '4957.50',
      pending: '42.50',
      ledger: '5000.00',
      asOf: LATER,
    },
  },
  getBalanceHistory: {
    summary: "List a vault's daily balances",
    description:
      "The vault's balances by UTC day, newest first: each past day's end-of-day snapshot, " +
      'taken by the workers after midnight (missed days are backfilled), `final` saying ' +
      'whether the figures are final. Optionally between `startDate` and `endDate` ' +
      '(YYYY-MM-DD); `startingAfter` is a day, and the next page holds the days before it.',
    returns: 'A page of daily balances.',
    errors: [
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'startDate: must be a date, YYYY-MM-DD',
        param: 'startDate',
      },
    ],
    example: list([
      {
        object: 'balance_snapshot',
        vaultId: VAULT_ID,
        date: '2026-03-01',
        currency: 'USDC',
        ledger: '5000.00',
        available: '5000.00',
        pending: '0.00',
        final: true,
      },
    ]),
  },

  listVaultDeposits: {
    summary: "List the transfers found at a vault's deposit address",
    description:
      "Send the vault's currency (USDC or SOL) on Solana to its `depositAddress`. Once a " +
      'transfer is finalized the deposit watcher records it here, newest first: `credited` ' +
      '(the vault was credited once, a completed `deposit` transaction, ' +
      '`transaction.completed`), then `swept` when it has moved into the treasury; or ' +
      '`ignored` with `ignoredReason` and never credited: a token of another mint, the other ' +
      'currency, less than the minimum (0.01 USDC, 0.001 SOL), or a closed vault.',
    returns: 'A page of deposits.',
    errors: ['vault_not_found'],
    example: list([
      {
        id: 'dep_0193a4f1d06f7b24f1a2b3c4d5e6f7a8',
        object: 'chain_deposit',
        vaultId: VAULT_ID,
        status: 'credited',
        ignoredReason: null,
        currency: 'USDC',
        mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
        amount: '250',
        signature:
          '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
        instructionIndex: 1,
        innerIndex: -1,
        slot: 312004518,
        sender: EXAMPLE_ADDRESS,
        transactionId: DEPOSIT_ID,
        foundAt: LATER,
        creditedAt: LATER,
        sweptAt: null,
      },
    ]),
  },
} satisfies Record<string, OperationDoc>;
