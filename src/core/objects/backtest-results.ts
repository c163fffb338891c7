import type { BacktestResult } from '../decision/backtest.js';
import { formatAmount } from '../money/amount.js';
import type { CurrencyInfo } from '../money/currencies.js';
import { isoTimestamp } from '../time.js';
import type { BacktestResultRecord } from './records.js';

/**
 * A backtest's answer (issue 14) as a run stores it (backtests.result): counts, the breakdown
 * by rule and decline code, the draft's shadow matches, and the examples (transactions whose
 * outcome the draft changes), amounts in the vault's currency. The API presents it with
 * presentBacktestResult (platform-presenters.ts).
 */
export function backtestResultRecord(
  result: BacktestResult,
  currency: CurrencyInfo,
): BacktestResultRecord {
  return {
    authorizations: result.authorizations,
    replayed: result.replayed,
    notReplayed: { ...result.notReplayed },
    unchanged: result.unchanged,
    approvedToDeclined: result.approvedToDeclined,
    declinedToApproved: result.declinedToApproved,
    byRule: result.byRule.map((counts) => ({
      rule: counts.rule,
      declineCode: counts.declineCode,
      approvedToDeclined: counts.approvedToDeclined,
      declinedToApproved: counts.declinedToApproved,
      unchanged: counts.unchanged,
    })),
    shadowMatches: result.shadowMatches.map((counts) => ({
      rule: counts.rule,
      message: counts.message,
      count: counts.count,
    })),
    examples: result.examples.map(({ row, change, draft }) => {
      const { request, recorded } = row;
      return {
        transactionId: row.id,
        createdAt: isoTimestamp(row.atMs),
        cardId: request.cardId,
        amount: formatAmount(request.amount, currency),
        currency: currency.code,
        merchant: {
          name: request.merchant.name,
          mcc: request.merchant.mcc,
          country: request.merchant.country,
          city: request.merchant.city ?? null,
          id: request.merchant.id ?? null,
        },
        change,
        recorded: {
          approved: recorded.approved,
          declineCode: recorded.declineCode,
          declineReason: recorded.declineReason,
        },
        backtest: {
          approved: draft.approved,
          declineCode: draft.declineCode,
          declineReason: draft.declineReason,
        },
      };
    }),
  };
}
