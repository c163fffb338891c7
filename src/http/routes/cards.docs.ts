import type { OperationDoc } from '../operation-docs/doc.js';
import { ERROR_EXAMPLES } from '../operation-docs/error-examples.js';
import {
  CARD,
  CARD_ID,
  IDEMPOTENT,
  LATER,
  PAGINATION,
  VAULT_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the cards operations, by operationId. */
export const CARDS_DOCS = {
  createCard: {
    summary: 'Issue a card',
    description:
      'Issues a virtual card that spends from a vault, under its policy. The number and CVV ' +
      'are never in this answer: Reveal Card Details shows them. The vault must be active. ' +
      '`billingCurrency` (ISO 4217, default USD) is the currency the card network asks in: an ' +
      "authorization in it is converted into the vault's asset (USD to USDC at par).",
    returns: 'The card issued.',
    errors: [
      ...IDEMPOTENT,
      { ...ERROR_EXAMPLES.vault_not_found, code: 'vault_not_found', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_frozen, code: 'vault_frozen', param: 'vaultId' },
      { ...ERROR_EXAMPLES.vault_closed, code: 'vault_closed', param: 'vaultId' },
    ],
    example: CARD,
    requestExample: {
      vaultId: VAULT_ID,
      cardholderName: 'Ada Lovelace',
      metadata: { employeeId: 'e-2291' },
    },
  },
  listCards: {
    summary: 'List cards',
    description: `The cards of the key's account and mode, optionally of one vault or status. ${PAGINATION}`,
    returns: 'A page of cards.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the id of a card from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list([CARD]),
  },
  retrieveCard: {
    summary: 'Retrieve a card',
    description: 'A card, without its number or CVV (Reveal Card Details shows them).',
    returns: 'The card.',
    errors: ['card_not_found'],
    example: CARD,
  },
  updateCard: {
    summary: 'Update a card',
    description:
      "Changes a card's cardholder name or its metadata: given keys are set, a key set to " +
      '`null` is removed, others are kept. Sends `card.updated`. A cancelled card cannot be ' +
      'changed.',
    returns: 'The card, updated.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: { ...CARD, cardholderName: 'Ada King', metadata: { team: 'ops' } },
    requestExample: { cardholderName: 'Ada King', metadata: { employeeId: null, team: 'ops' } },
  },
  revealCard: {
    summary: 'Reveal card details',
    description:
      "The card's full number and CVV, with `Cache-Control: no-store`. With two-factor on, " +
      'send a current code in `X-Two-Factor-Code`. Nothing of the answer is stored, so an ' +
      '`Idempotency-Key` replays nothing here: a retry reveals again. A cancelled card is ' +
      'never shown again.',
    returns: 'The card details.',
    errors: [
      'card_not_found',
      'card_cancelled',
      'two_factor_required',
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: {
      object: 'card_details',
      cardId: CARD_ID,
      number: '4242424242424242',
      cvv: '123',
      expMonth: 3,
      expYear: 2029,
    },
  },
  createCardDisplayToken: {
    summary: 'Create a card display token',
    description:
      "A single-use token that lets the hosted page `GET /card-display?token=...` show the card's " +
      'number, expiry and CVV once, within 60 seconds: load that page in an iframe of a page on ' +
      'an origin the account registered (Set Display Origins), so that the number reaches the ' +
      "cardholder's browser without passing through your servers. Needs `cards:reveal`, and with " +
      'two-factor on a current code in `X-Two-Factor-Code`, as Reveal Card Details. Only a hash ' +
      'of the token is stored; it is answered once, with `Cache-Control: no-store`, and a retry ' +
      'makes another. The page takes `font` (one of system, sans-serif, serif, monospace, ' +
      'helvetica, georgia, courier) and `color`, `background`, `accent` (`#rrggbb`, in a URL ' +
      '`%23rrggbb`); any other parameter, or a value off the list, is a 400 page that spends no token.',
    returns: 'The token, the page URL (relative to the API base) and its expiry.',
    errors: [
      'card_not_found',
      'card_cancelled',
      'two_factor_required',
      'invalid_two_factor_code',
      {
        code: 'rate_limit_exceeded',
        message: 'Too many wrong two-factor codes: try again in 540 seconds.',
      },
    ],
    example: {
      object: 'card_display_token',
      cardId: CARD_ID,
      token: 'cdt_Qk1hY2hpbmUtbWFkZS1leGFtcGxlLW5vdC1hLXRva2V',
      url: '/card-display?token=cdt_Qk1hY2hpbmUtbWFkZS1leGFtcGxlLW5vdC1hLXRva2V',
      expiresAt: '2026-03-02T14:06:09.412Z',
    },
  },
  freezeCard: {
    summary: 'Freeze a card',
    description:
      'Declines every authorization of the card (`card_declined`) until it is unfrozen. ' +
      'Freezing a frozen card changes nothing.',
    returns: 'The card, frozen.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: { ...CARD, status: 'frozen' },
  },
  unfreezeCard: {
    summary: 'Unfreeze a card',
    description: 'Lets the card authorize again. Unfreezing an active card changes nothing.',
    returns: 'The card, active.',
    errors: [...IDEMPOTENT, 'card_not_found', 'card_cancelled'],
    example: CARD,
  },
  cancelCard: {
    summary: 'Cancel a card',
    description:
      'Cancels the card for good: it declines every authorization and is never revealed again. ' +
      'Open holds stay until captured, reversed or expired.',
    returns: 'The card, cancelled.',
    errors: [...IDEMPOTENT, 'card_not_found'],
    example: { ...CARD, status: 'cancelled', cancelledAt: LATER },
  },
} satisfies Record<string, OperationDoc>;
