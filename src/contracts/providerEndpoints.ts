/** Razorpay's endpoints by one name each, shared by the adapter's call counts (src/gateway/callCounts.ts)
 * and the sandbox's fault rules (src/sandbox/control.ts), so a counted endpoint is one a test can fault. */
export const PROVIDER_ENDPOINTS = [
  'orders.create', 'orders.fetch', 'orders.payments', 'payments.fetch', 'payments.list', 'payments.capture', 'payments.transfers', 'payments.refunds',
  'transfers.create', 'transfers.fetch', 'transfers.list', 'transfers.reverse', 'transfers.reversals',
  'refunds.create', 'refunds.fetch', 'settlements.recon', 'settlements.fetch',
] as const;
/** Every endpoint the adapter calls. */
export type ProviderEndpoint = (typeof PROVIDER_ENDPOINTS)[number];
