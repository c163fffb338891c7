import { z } from 'zod';
import { BACKTEST_BOUNDS } from '../../core/index.js';
import { moneyOutput, text, timestampOutput } from './common.js';
import { policyBody } from './policy.js';

/*
 * Policy backtests (issue 14): the request and the backtest object, validation, types and the
 * OpenAPI document from one source. What is replayed and how: src/core/decision/backtest.ts.
 */

const isoDay = z.iso.date({ error: 'must be a date, YYYY-MM-DD' });

export const backtestBody = z.strictObject({
  policy: policyBody.meta({
    description:
      'The draft policy to replay, in the format of Set Policy (refused as Set Policy would ' +
      'refuse it, `param` under `policy`).',
  }),
  startDate: isoDay.meta({ description: 'The first UTC day of the window, YYYY-MM-DD.' }),
  endDate: isoDay.meta({
    description:
      `The last UTC day of the window, YYYY-MM-DD, included: at most ${BACKTEST_BOUNDS.windowDaysMax} ` +
      'days after startDate counting both. A window reaching past now ends now.',
  }),
});

export const backtestParams = z.object({
  id: z
    .string()
    .transform((id) => id.toWellFormed().replaceAll('\u0000', '\uFFFD'))
    .meta({ description: 'The vault or card id; one that names nothing is a 404.' }),
  backtestId: text(1, 200).meta({ description: 'The backtest id (bt_...).' }),
});

const declineCode = z.enum(['authorization_failed', 'insufficient_balance', 'card_declined']);
const declineReason = z.object({ rule: z.string(), message: z.string() });
const decision = z.object({
  approved: z.boolean(),
  declineCode: declineCode.nullable(),
  declineReason: declineReason.nullable(),
});

const example = z.object({
  transactionId: z.string(),
  createdAt: timestampOutput,
  cardId: z.string(),
  amount: moneyOutput,
  currency: z.string(),
  merchant: z.object({
    name: z.string(),
    mcc: z.string(),
    country: z.string(),
    city: z.string().nullable(),
    id: z.string().nullable(),
  }),
  change: z.enum(['approved_to_declined', 'declined_to_approved']),
  recorded: decision.meta({ description: 'The decision recorded.' }),
  backtest: decision.meta({ description: 'The decision under the draft.' }),
});

const backtestResult = z
  .object({
    authorizations: z.number().int().meta({
      description: 'Card authorizations recorded in the window, replayed or not.',
    }),
    replayed: z.number().int().meta({ description: 'Of those, the ones the draft judged.' }),
    notReplayed: z
      .object({
        cardDeclined: z.number().int(),
        standIn: z.number().int(),
        otherPolicy: z.number().int(),
      })
      .meta({
        description:
          'Kept as recorded: declined before the policy was reached (`card_declined`: card ' +
          'or vault not active, another currency), answered in stand-in, or declined by the ' +
          "other policy (the card's own, in a vault's backtest; the vault's, in a card's).",
      }),
    unchanged: z.number().int(),
    approvedToDeclined: z.number().int(),
    declinedToApproved: z.number().int(),
    byRule: z
      .array(
        z.object({
          rule: z.string(),
          declineCode,
          approvedToDeclined: z.number().int(),
          declinedToApproved: z.number().int(),
          unchanged: z.number().int(),
        }),
      )
      .meta({
        description:
          'By rule and decline code, most authorizations first. `approvedToDeclined` and ' +
          '`unchanged` (declined both as recorded and under the draft) count under the ' +
          "draft's declining rule; `declinedToApproved` under the recorded rule the draft " +
          `lifts. At most ${BACKTEST_BOUNDS.ruleRowsMax} rows; more are counted under \`(other)\`.`,
      }),
    shadowMatches: z
      .array(z.object({ rule: z.string(), message: z.string(), count: z.number().int() }))
      .meta({ description: "The draft's shadow rules that held on replayed authorizations." }),
    examples: z.array(example).meta({
      description: `The first ${BACKTEST_BOUNDS.examplesMax} authorizations whose outcome the draft changes, in order.`,
    }),
  })
  .meta({ id: 'BacktestResult' });

export const backtestObject = z
  .object({
    id: z.string(),
    object: z.literal('policy_backtest'),
    vaultId: z.string(),
    cardId: z.string().nullable().meta({
      description:
        "A card backtest's card (its authorizations under the draft alone); null for a vault's.",
    }),
    status: z.enum(['queued', 'running', 'completed', 'failed']),
    startDate: z.string(),
    endDate: z.string(),
    policy: z.looseObject({}).meta({ description: 'The draft as compiled, defaults filled in.' }),
    progress: z
      .object({
        replayed: z.number().int(),
        total: z.number().int().nullable(),
      })
      .meta({
        description:
          'Authorizations read so far of `total` (counted when a run starts; null while queued).',
      }),
    result: backtestResult.nullable().meta({ description: 'Set once completed.' }),
    failureMessage: z.string().nullable(),
    createdAt: timestampOutput,
    completedAt: timestampOutput.nullable(),
  })
  .meta({ id: 'PolicyBacktest' });
