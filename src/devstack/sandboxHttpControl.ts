import type { RzpPayment, RzpRefund, RzpReversal, RzpSettlement, RzpTransfer } from '../gateway/types';
import type { FaultRule, LinkedAccountStatus, SandboxControl, WebhookFault } from '../sandbox/control';


/** SandboxControl over the sandbox's HTTP control routes (src/sandbox/routes/control.ts). */
export function sandboxHttpControl(baseUrl: string): SandboxControl {
  async function call<T>(method: string, route: string, body?: unknown, query?: Record<string, string | undefined>): Promise<T> {
    const url = new URL(`/_sandbox${route}`, baseUrl);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let description = text;
      try { description = (JSON.parse(text) as { error?: { description?: string } }).error?.description ?? text; } catch { /* not JSON */ }
      throw new Error(`sandbox ${method} ${route} → ${res.status}: ${description}`);
    }
    if ((res.headers.get('content-type') ?? '').startsWith('text/csv')) return text as T;
    return (text ? JSON.parse(text) : undefined) as T;
  }
  const done = async (p: Promise<unknown>): Promise<void> => { await p; };
  return {
    createLinkedAccount: async (o: { id?: string; status?: LinkedAccountStatus; name?: string } = {}) => (await call<{ id: string }>('POST', '/linked-accounts', o)).id,
    setLinkedAccountStatus: (id, status) => done(call('PUT', `/linked-accounts/${encodeURIComponent(id)}/status`, { status })),
    setPlatformBalance: (paise) => done(call('PUT', '/balance', { paise })),
    setRateLimit: (settings) => done(call('PUT', '/rate-limit', settings)),
    platformBalance: async () => (await call<{ paise: number }>('GET', '/balance')).paise,
    payOrder: (orderId, o) => call<RzpPayment>('POST', `/orders/${encodeURIComponent(orderId)}/pay`, o ?? {}),
    failPayment: (orderId) => call<RzpPayment>('POST', `/orders/${encodeURIComponent(orderId)}/fail`, {}),
    lateAuthorize: (paymentId) => call<RzpPayment>('POST', `/payments/${encodeURIComponent(paymentId)}/late-authorize`, {}),
    capturedPaymentWithoutOrder: (amountPaise) => call<RzpPayment>('POST', '/orphan-payments', { amountPaise }),
    setWebhookTarget: (url) => done(call('PUT', '/webhooks/target', { url })),
    setWebhookDelivery: (enabled) => done(call('PUT', '/webhooks/delivery', { enabled })),
    injectWebhookFault: (fault: WebhookFault, o) => done(call('POST', '/webhooks/faults', { fault, ...o })),
    webhookEvents: () => call('GET', '/webhooks/events'),
    drainWebhooks: (timeoutMs) => done(call('POST', '/webhooks/drain', timeoutMs === undefined ? {} : { timeoutMs })),
    injectFault: (rule: FaultRule) => done(call('POST', '/faults', rule)),
    clearFaults: () => done(call('DELETE', '/faults')),
    callCounts: () => call<Record<string, number>>('GET', '/call-counts'),
    callPathCounts: () => call<Record<string, number>>('GET', '/call-path-counts'),
    faultsFired: () => call<Record<string, number>>('GET', '/faults/fired'),
    transfers: (filter = {}) => call<RzpTransfer[]>('GET', '/transfers', undefined, { recipient: filter.recipient }),
    refunds: () => call<RzpRefund[]>('GET', '/refunds'),
    processPendingTransfers: (o = {}) => done(call('POST', '/transfers/process', o)),
    retryFailedTransfers: (o = {}) => call<RzpTransfer[]>('POST', '/transfers/retry-failed', o),
    reverseTransferFromDashboard: (transferId, o = {}) => call<RzpReversal>('POST', `/transfers/${encodeURIComponent(transferId)}/reverse`, o),
    now: async () => (await call<{ unixMs: number }>('GET', '/clock')).unixMs,
    setClock: (unixMs) => done(call('PUT', '/clock', { unixMs })),
    runSettlements: (o) => call<RzpSettlement[]>('POST', '/settlements/run', o),
    injectAdjustment: (o) => done(call('POST', '/adjustments', o)),
    putOnHold: (paymentId) => done(call('POST', `/payments/${encodeURIComponent(paymentId)}/hold`, {})),
    bankStatementCsv: (o) => call<string>('GET', '/bank-statement.csv', undefined, { from: o.from, to: o.to }),
    reset: () => done(call('POST', '/reset', {})),
  };
}
