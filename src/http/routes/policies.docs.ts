import type { OperationDoc } from '../operation-docs/doc.js';
import { ERROR_EXAMPLES } from '../operation-docs/error-examples.js';
import {
  APPROVED,
  BACKTEST,
  BACKTEST_ID,
  BACKTEST_REQUEST,
  CARD_ID,
  CARD_POLICY,
  CARD_POLICY_DOCUMENT,
  CARD_POLICY_LIMITS,
  IDEMPOTENT,
  POLICY,
  POLICY_DOCUMENT,
  POLICY_LIMITS,
  POLICY_VERSIONS,
  VAULT_ID,
  list,
} from '../operation-docs/examples.js';

/** The reference page's text and examples of the policies operations, by operationId. */
export const POLICIES_DOCS = {
  setPolicy: {
    summary: "Set a vault's authorization policy",
    description:
      "Replaces the vault's policy (the `PolicyDocument` schema): limits, " +
      'merchant categories and countries, templates of the rule library (GET ' +
      '/v1/rule-templates) and custom rules. The policy is compiled before it is stored, so a ' +
      'bad one is refused with `policy_invalid` and `param` at the fault, and authorizations ' +
      'decide with the new version at once. Try a draft first with Simulate Policy. Every ' +
      'change is kept as a version (List Policy Versions), with the key that made it.',
    returns: 'The policy stored, with its new version.',
    errors: [...IDEMPOTENT, 'policy_invalid', 'vault_not_found', 'vault_closed'],
    example: POLICY,
    requestExample: POLICY_DOCUMENT,
  },
  getPolicy: {
    summary: "Retrieve a vault's authorization policy",
    description:
      'The policy as stored, with its version (one more on each Set Policy) and defaults ' +
      "filled in (a rule's `action` and `mode`).",
    returns: 'The policy.',
    errors: ['vault_not_found', 'policy_not_found'],
    example: POLICY,
  },
  deletePolicy: {
    summary: "Delete a vault's authorization policy",
    description:
      'Removes the policy: the vault then approves whatever its balance covers. The delete is ' +
      'a version of the history (List Policy Versions): the version count goes on from it.',
    returns: 'The deletion.',
    errors: [...IDEMPOTENT, 'vault_not_found', 'policy_not_found'],
    example: { object: 'policy', vaultId: VAULT_ID, deleted: true },
  },
  simulatePolicy: {
    summary: 'Simulate a decision',
    description:
      'The decision the vault would give a transaction now, against its live balance and spend ' +
      'so far, with its current policy, or with a draft in `policy` (refused as Set Policy ' +
      'would refuse it, `param` under `policy`). Records and holds nothing. A `cardId` must be ' +
      "one of the vault's cards; when that card has a policy of its own, it decides too, " +
      "after the vault's (or the draft), against the card's spend, as authorize would. Shadow " +
      'rules that match are reported in `shadowMatches`.',
    returns: 'The decision, as the authorize callback would answer it, without an id.',
    errors: [
      'vault_not_found',
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
      {
        code: 'card_not_found',
        message: `No card ${CARD_ID} exists on this vault.`,
        param: 'transaction.cardId',
      },
      'invalid_currency',
      { ...ERROR_EXAMPLES.invalid_amount, code: 'invalid_amount', param: 'transaction.amount' },
    ],
    example: {
      ...APPROVED,
      id: null,
      approved: false,
      status: 'declined',
      declineCode: 'authorization_failed',
      declineReason: {
        rule: 'limits[1]',
        message: 'Per-transaction limit of 250.00 USDC would be exceeded',
      },
      amount: '1200.00',
      cardId: null,
      decidedInMicros: 95,
    },
    requestExample: {
      policy: { limits: [{ interval: 'perTransaction', amount: '250' }] },
      transaction: {
        amount: '1200.00',
        merchant: { name: 'Acme Airlines', mcc: '4511', country: 'US' },
      },
    },
  },
  getPolicyLimits: {
    summary: "Retrieve a vault's remaining limits",
    description:
      "For every limit of the vault's policy (its own `limits[i]` and its templates', in the " +
      'order they decide): the amount or count it allows, what its current window has used, ' +
      'what remains for the next authorization, and when the window starts again (`resetsAt`, ' +
      'UTC calendar windows; null per transaction and all time). The figures come from the ' +
      'same counters and comparisons as the decision: a purchase above `remaining` is declined ' +
      'by that limit, one of exactly `remaining` is not; a count limit declines once ' +
      '`remaining` is 0. A limit narrowed to `merchantCategories` counts and limits spend at ' +
      "those categories only. The vault's spend counts its card authorizations and external " +
      'transfers.',
    returns: 'The limits of the current policy, as of now.',
    errors: ['vault_not_found', 'policy_not_found'],
    example: POLICY_LIMITS,
  },
  listPolicyVersions: {
    summary: "List a vault's policy versions",
    description:
      "Every change of the vault's policy (Set Policy, Delete Policy, Restore Policy Version) " +
      "is a version: its number (the policy's `version` after the change: a delete takes a " +
      'number too), what it did (`change`), the API key that made it (`keyId`, its id; null ' +
      'for a change made without a key, such as the version a policy had when the history ' +
      'began), when, and the document from then on (null for a delete). Newest first, ' +
      '`limit` (1-100, default 10) at a time: while `hasMore` is true, pass `nextCursor` (a ' +
      'version number) as `startingAfter`.',
    returns: 'A page of versions.',
    errors: [
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be a version number from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list(POLICY_VERSIONS, '2'),
  },
  restorePolicyVersion: {
    summary: "Restore a version of a vault's policy",
    description:
      'Sets the document of an earlier version again, as a new version (recorded as a ' +
      '`restore` of that version, with `policy.updated`), exactly as Set Policy would set it. ' +
      'A version that is a delete has no document to restore.',
    returns: 'The policy stored, with its new version.',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      {
        code: 'policy_not_found',
        message: `Vault ${VAULT_ID} has no policy version 7.`,
        param: 'version',
      },
      {
        code: 'parameter_invalid',
        message: `Version 2 of the policy of vault ${VAULT_ID} is its deletion, with no document to restore.`,
        param: 'version',
      },
      'vault_closed',
    ],
    example: { ...POLICY, version: 4 },
  },
  setCardPolicy: {
    summary: "Set a card's own policy",
    description:
      "Gives one card a policy of its own, in the vault policy's format (the `PolicyDocument` " +
      "schema, amounts in the vault's currency): an authorization on the card must pass the " +
      "vault's policy and then the card's. A decline by the card's policy says so: " +
      "`declineReason.policy` is `card` (absent when the vault's policy or a fixed check " +
      "declined, as it always was). Its limits and spend facts count the card's own approved " +
      'authorizations, from before the policy was set too. Refused like Set Policy; answered ' +
      "with `cardId` and the card's vault; `policy.updated` is sent with the same object.",
    returns: "The card's policy stored, with its new version.",
    errors: [...IDEMPOTENT, 'policy_invalid', 'card_not_found', 'card_cancelled', 'vault_closed'],
    example: CARD_POLICY,
    requestExample: CARD_POLICY_DOCUMENT,
  },
  getCardPolicy: {
    summary: "Retrieve a card's own policy",
    description:
      "The card's policy as stored, with its version and defaults filled in. A card without " +
      "one is decided by its vault's policy alone.",
    returns: "The card's policy.",
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: CARD_POLICY,
  },
  deleteCardPolicy: {
    summary: "Delete a card's own policy",
    description:
      "Removes the card's policy (a version of its history): the card is then decided by its " +
      "vault's policy alone. `policy.deleted` is sent with the answer's object.",
    returns: 'The deletion.',
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: { object: 'policy', vaultId: VAULT_ID, cardId: CARD_ID, deleted: true },
  },
  getPolicyLimitsOfCard: {
    summary: "Retrieve a card's remaining limits",
    description:
      "Retrieve a vault's remaining limits, for the card's own policy: each limit's figures " +
      "from the card's own spend (its approved authorizations), as the card's policy decides " +
      "with them. The vault's limits apply to the card too: see the vault's.",
    returns: "The limits of the card's current policy, as of now.",
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no authorization policy.`,
        param: 'id',
      },
    ],
    example: CARD_POLICY_LIMITS,
  },
  listPolicyVersionsOfCard: {
    summary: "List a card's policy versions",
    description:
      "List a vault's policy versions, for the card's own policy: every Set Card Policy, " +
      'Delete Card Policy and restore, newest first.',
    returns: 'A page of versions.',
    errors: [
      'card_not_found',
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be a version number from a previous page.',
        param: 'startingAfter',
      },
    ],
    example: list(
      POLICY_VERSIONS.map((version) => ({
        ...version,
        cardId: CARD_ID,
        document: version.document === null ? null : CARD_POLICY_DOCUMENT,
      })),
    ),
  },
  restorePolicyVersionOfCard: {
    summary: "Restore a version of a card's own policy",
    description:
      "Restore a version of a vault's policy, for the card's own: the version's document set " +
      'again as a new version, as Set Card Policy would set it, with `policy.updated`.',
    returns: "The card's policy stored, with its new version.",
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `Card ${CARD_ID} has no policy version 7.`,
        param: 'version',
      },
      {
        code: 'parameter_invalid',
        message: `Version 2 of the policy of card ${CARD_ID} is its deletion, with no document to restore.`,
        param: 'version',
      },
      'card_cancelled',
    ],
    example: { ...CARD_POLICY, version: 4 },
  },
  listRuleTemplates: {
    summary: 'List rule templates',
    description:
      'The templates of the rule library that a policy can name in `templates`: what each ' +
      'does, its parameters with the JSON Schema of their values, and an example policy that ' +
      'uses it (with a transaction it decides as `outcome` says). The library is the same for ' +
      'every account. In name order, `limit` (1-100, default 10) at a time: while `hasMore` ' +
      'is true, pass `nextCursor` as `startingAfter`.',
    returns: 'A page of templates.',
    errors: [
      {
        code: 'parameter_invalid',
        message: 'startingAfter must be the name of a rule template from a previous page',
        param: 'startingAfter',
      },
    ],
    example: list([
      {
        object: 'rule_template',
        name: 'daily-cap',
        description:
          "Declines once the day's spend (UTC calendar day), this transaction included, would exceed amount.",
        parameters: [
          {
            name: 'amount',
            type: 'amount',
            description: 'Most the vault may spend in one UTC day.',
            required: true,
            schema: {
              type: ['number', 'string'],
              description: 'Most the vault may spend in one UTC day.',
            },
          },
        ],
        example: {
          policy: { templates: [{ name: 'daily-cap', params: { amount: '1000' } }] },
          transaction: {
            amount: '50.01',
            mcc: '5812',
            country: 'US',
            merchantName: 'Corner Shop',
            at: '2026-11-18T12:00:00Z',
          },
          spend: { 'amount:daily': '950' },
          outcome: 'decline',
        },
      },
    ]),
  },

  createVaultPolicyBacktest: {
    summary: 'Backtest a draft policy on a vault',
    description:
      "Replays the vault's recorded card authorizations of a window (whole UTC days, at most " +
      '90, ending now at the latest) under a draft policy, in order, with the spend counters ' +
      'as the draft would have left them: its limits start from the spend recorded before ' +
      'the window, add what the draft approves and take back what was later released. Counts ' +
      'approved -> declined, declined -> approved and unchanged, by rule and decline code, ' +
      'with the first 100 authorizations that change. Judged: every authorization that ' +
      'reached the policy. Kept as recorded: declines before the policy (`card_declined`), ' +
      'stand-in answers, and the balance (an `insufficient_balance` decline stays one unless ' +
      'the draft declines first; a lifted decline is assumed covered). A window of at most ' +
      '10,000 authorizations is answered completed (200); a larger one is queued (202) and ' +
      'replayed by the worker role: read it with Retrieve Vault Backtest. Stored, so every ' +
      'answer is there to read again. Needs `transactions:read`: the answer is made of ' +
      'recorded transactions.',
    returns: 'The backtest: completed with its result (200), or queued (202).',
    errors: [
      ...IDEMPOTENT,
      'vault_not_found',
      {
        code: 'parameter_invalid',
        message: 'The window holds 120 days; a backtest replays at most 90.',
        param: 'endDate',
      },
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
    ],
    example: BACKTEST,
    requestExample: BACKTEST_REQUEST,
  },
  getVaultPolicyBacktest: {
    summary: 'Retrieve a vault backtest',
    description:
      "A backtest of the vault's policy by its id: `queued`, `running` (with `progress`: " +
      'authorizations read of `total`), `completed` (with `result`) or `failed` (with ' +
      '`failureMessage`; ask again). A backtest of another vault, or unknown, is ' +
      '`policy_not_found` with `param` backtestId.',
    returns: 'The backtest.',
    errors: [
      'vault_not_found',
      {
        code: 'policy_not_found',
        message: `No backtest ${BACKTEST_ID} exists for vault ${VAULT_ID}.`,
        param: 'backtestId',
      },
    ],
    example: BACKTEST,
  },
  createCardPolicyBacktest: {
    summary: 'Backtest a draft policy on a card',
    description:
      "As Backtest Vault Policy, over one card's recorded authorizations, under the draft " +
      "alone (the vault's policy aside), with the card's own spend counted by its limits.",
    returns: 'The backtest: completed with its result (200), or queued (202).',
    errors: [
      ...IDEMPOTENT,
      'card_not_found',
      {
        code: 'parameter_invalid',
        message: 'endDate is before startDate.',
        param: 'endDate',
      },
      {
        code: 'policy_invalid',
        message: 'policy.limits[0].amount: must be a number or a decimal string',
        param: 'policy.limits[0].amount',
      },
    ],
    example: { ...BACKTEST, cardId: CARD_ID },
    requestExample: BACKTEST_REQUEST,
  },
  getCardPolicyBacktest: {
    summary: 'Retrieve a card backtest',
    description:
      "A backtest of the card's policy by its id, as Retrieve Vault Backtest. A backtest of " +
      'another card, or unknown, is `policy_not_found` with `param` backtestId.',
    returns: 'The backtest.',
    errors: [
      'card_not_found',
      {
        code: 'policy_not_found',
        message: `No backtest ${BACKTEST_ID} exists for card ${CARD_ID}.`,
        param: 'backtestId',
      },
    ],
    example: { ...BACKTEST, cardId: CARD_ID },
  },
} satisfies Record<string, OperationDoc>;
