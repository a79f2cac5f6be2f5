/** The seam between money in and payouts: after the commit that makes an order payable, money in
 * asks the payout layer to start. A failure here loses nothing: the sweep finds the pending row. */
export interface PayoutStarter {
  startPayout(orderId: string): Promise<void>;
}

/** Until a Temporal-backed starter is wired in, payable rows simply wait for the sweep. */
export const leaveForSweep: PayoutStarter = {
  async startPayout() {},
};
