/** The catalogue of reconciliation differences: every reason code, how serious it is and what
 * finance should do about it. Classes: `expected` = one side has not arrived yet (still within its
 * due date), `unmatched` = one side is missing past its due date (or exists only on one side by
 * nature, like an adjustment), `mismatched` = both sides present but different. */

export const REASONS = [
  'captured-not-settled',
  'settled-not-in-app',
  'amount-mismatch',
  'fee-mismatch',
  'refund-not-in-app',
  'transfer-not-in-app',
  'settlement-sum-mismatch',
  'partially-settled',
  'settlement-without-bank-credit',
  'unmatched-bank-credit',
  'adjustment',
  'on-hold',
  'payment-disputed',
  'refund-rejected',
  'refund-failed',
  'split-not-processed',
  'split-paid-after-owed-offline',
  'refund-outside-app',
  'reversal-not-in-app',
  'offline-payment-without-debit',
  'offline-debit-amount-differs',
  'unexplained-bank-debit',
  'ledger-drift',
] as const;
export type ReasonCode = (typeof REASONS)[number];

export const CLASSES = ['expected', 'unmatched', 'mismatched'] as const;
export type ExceptionClass = (typeof CLASSES)[number];

export type Severity = 'low' | 'medium' | 'high' | 'critical';

interface ReasonRule { severity: Severity; nextAction: string }

const RULES: Record<ReasonCode, ReasonRule> = {
  'captured-not-settled': { severity: 'high', nextAction: 'Past its T+2 due date: raise a settlement query with Razorpay quoting the payment id.' },
  'settled-not-in-app': { severity: 'high', nextAction: 'Razorpay settled a payment we have no order for: find the order (or orphan) and refund or book it.' },
  'amount-mismatch': { severity: 'high', nextAction: 'Compare the gateway amount with our record; correct our record or dispute with Razorpay.' },
  'fee-mismatch': { severity: 'medium', nextAction: 'Check the fee (which includes tax) against the pricing plan; dispute an overcharge with Razorpay.' },
  'refund-not-in-app': { severity: 'high', nextAction: 'A refund we did not request was settled: find who issued it and book or recover it.' },
  'transfer-not-in-app': { severity: 'critical', nextAction: 'Possible double payment: a transfer we did not record left our balance. Check the vendor payouts now and reverse if duplicated.' },
  'settlement-sum-mismatch': { severity: 'high', nextAction: 'The settlement amount differs from the sum of its rows: ask Razorpay for the settlement breakup.' },
  'partially-settled': { severity: 'medium', nextAction: 'Only part of the payment settled: wait for the next settlement slot; escalate if the rest does not arrive.' },
  'settlement-without-bank-credit': { severity: 'high', nextAction: 'No bank credit with this UTR and amount: import the latest bank statement, then ask the bank to trace the UTR.' },
  'unmatched-bank-credit': { severity: 'high', nextAction: 'A bank credit matches no settlement: identify its source before booking it.' },
  adjustment: { severity: 'medium', nextAction: 'Review the adjustment with Razorpay and book it; adjustments are never auto-matched.' },
  'on-hold': { severity: 'medium', nextAction: 'Razorpay holds this payment: find out why (risk/dispute) and follow up until it is released.' },
  'refund-rejected': { severity: 'high', nextAction: 'Razorpay refused the refund for good: the customer\'s money is still with us. Check the code in the ops refund queue (GET /ops/refunds?status=rejected) and refund another way.' },
  'refund-failed': { severity: 'high', nextAction: 'Razorpay accepted the refund, then it failed: the customer was not refunded. Raise it with Razorpay quoting the refund id, or refund another way.' },
  'split-not-processed': { severity: 'high', nextAction: 'The Route split to the vendor is not processed past its due date: check the transfer on the Razorpay Dashboard; once Razorpay stops retrying it is owed offline.' },
  'split-paid-after-owed-offline': { severity: 'critical', nextAction: 'Possible double payment: the split processed after the vendor was listed as owed offline. Stop the offline payment, or recover it if already made.' },
  'payment-disputed': { severity: 'high', nextAction: 'The customer\'s bank disputes this payment: accept or contest it (with evidence) on the Razorpay Dashboard before its respond-by date; a lost dispute is deducted from our balance.' },
  'reversal-not-in-app': { severity: 'high', nextAction: 'Razorpay reversed a transfer and credited it back, and our records know no such reversal: find the transfer on the Razorpay Dashboard (Route → the reversal id). If it paid a vendor (a payout or a split of ours), that vendor is owed again: make sure its payout is in the ops queue (TRANSFER_REVERSED) or the reversal is owed offline; if it is not ours, find who made it.' },
  'offline-payment-without-debit': { severity: 'high', nextAction: 'A settlement line was recorded paid with this UTR but no bank debit has it: import the latest bank statement (with its DR lines); if the debit is still missing, ask the bank to trace the UTR before paying the vendor again.' },
  'offline-debit-amount-differs': { severity: 'critical', nextAction: 'The bank debited a different amount under this settlement line\'s UTR: compare the bank file with the bank\'s response; recover an overpayment from the vendor, or pay the shortfall, then resolve.' },
  'unexplained-bank-debit': { severity: 'high', nextAction: 'A debit from our account matches no settlement line paid with its UTR: find the payment (a line recorded with a typo in its UTR, or a payment made outside the app) and record or recover it.' },
  'ledger-drift': { severity: 'critical', nextAction: 'The ledger as the rails wrote it no longer says what their rows say for this vendor: a rail missed a write, or a row was changed by hand. Do not pay the vendor by hand until it is explained: read the differences in the details, then run `npm run ledger` (it names each one and rebuilds the ledger from the rails); the next recon run resolves this when the two agree.' },
  'refund-outside-app': { severity: 'high', nextAction: 'Someone refunded the customer outside the app (e.g. the Razorpay Dashboard) after the vendor was paid or while it was being paid: the negative offline-ledger line (refund_clawback) is what the vendor owes back; confirm the refund with whoever issued it, then recover the amount from the vendor (net it off the next offline payment) and resolve.' },
};

const EXPECTED_ACTION: Partial<Record<ReasonCode, string>> = {
  'captured-not-settled': 'Nothing yet: the settlement is not due. It becomes an exception after its due date.',
  'settlement-without-bank-credit': 'Nothing yet: the credit can reach the bank up to the next working day. Import that day\'s statement.',
  'offline-payment-without-debit': 'Nothing yet: the debit can reach the statement up to the next working day after the value date. Import that day\'s statement.',
};

/** Waiting items are low, except those where money is stuck at the gateway. */
const EXPECTED_SEVERITY: Partial<Record<ReasonCode, Severity>> = { 'on-hold': 'medium', 'partially-settled': 'medium' };

export function describeReason(reason: ReasonCode, klass: ExceptionClass): ReasonRule {
  const rule = RULES[reason];
  if (klass === 'expected') return { severity: EXPECTED_SEVERITY[reason] ?? 'low', nextAction: EXPECTED_ACTION[reason] ?? rule.nextAction };
  return rule;
}
