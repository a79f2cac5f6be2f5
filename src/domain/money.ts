/** Money rules (design.md §2). Amounts are integer paise; rupees exist only for display. */
/** Razorpay's minimum for any transfer: ₹1. */
export const MIN_TRANSFER_PAISE = 100;

export function assertPaise(value: number, what: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be an integer number of paise, got ${value}`);
}

/** commission = round_half_up(total × bps / 10000), in integer arithmetic. */
export function commissionPaise(totalPaise: number, commissionBps: number): number {
  assertPaise(totalPaise, 'total');
  if (!Number.isInteger(commissionBps) || commissionBps < 0 || commissionBps > 10_000) {
    throw new RangeError(`commission must be 0..10000 basis points, got ${commissionBps}`);
  }
  const scaled = BigInt(totalPaise) * BigInt(commissionBps);
  return Number((scaled + 5_000n) / 10_000n);
}

/** vendor_net = total − commission, whatever the subsidy. */
export function vendorNetPaise(totalPaise: number, commissionBps: number): number {
  return totalPaise - commissionPaise(totalPaise, commissionBps);
}

/** ₹1,234.50 style, for display only. */
export function formatRupees(paise: number): string {
  const sign = paise < 0 ? '-' : '';
  const abs = Math.abs(paise);
  const rupees = Math.trunc(abs / 100).toLocaleString('en-IN');
  return `${sign}₹${rupees}.${String(abs % 100).padStart(2, '0')}`;
}

/** `1234.50`: rupees and paise with no grouping or sign, for files a bank reads (a thousands
 * separator is ambiguous in a CSV cell); the inverse of the bank statement's rupeesToPaise. */
export function plainRupees(paise: number): string {
  assertPaise(paise, 'amount');
  if (paise < 0) throw new RangeError('a bank file amount is never negative');
  return `${Math.trunc(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
}
