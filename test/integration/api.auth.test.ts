/** Who may call what: every route of the API, called with no key, with a key of a role it does not
 * accept, and with a key of a role it does. The table must name every registered route, so a new
 * route cannot ship without its row here. */
import { declaredRoutes } from '../../src/auth/routeAuth';
import { revokeApiKey } from '../../src/auth/apiKeys';
import type { RoleRequirement } from '../../src/auth/roles';
import { mintKey, type AuthHeader } from '../support/apiKeys';
import { http, seedPair, snapshot, startMoneyInHarness, topUp, uniqueRef, vendorKey, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_auth';
const VENDOR = 'ven_auth';
const OTHER_VENDOR = 'ven_other';

interface Row { method: string; url: string; path: () => string; body?: () => unknown }

describe('API authentication and roles', () => {
  let h: MoneyInHarness;
  let cashOrderId: string;
  let keyOf: Record<RoleRequirement, AuthHeader>;

  beforeAll(async () => {
    h = await startMoneyInHarness();
    await seedPair(h, { employerId: EMPLOYER, vendorId: VENDOR, commissionBps: 1_900 });
    await seedPair(h, { employerId: EMPLOYER, vendorId: OTHER_VENDOR, commissionBps: 1_900 });
    await topUp(h, 'employer', EMPLOYER, 1_000_000);
    const cash = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef('cash'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e1', totalPaise: 10_000, subsidyPaise: 2_000, customerSharePaise: 8_000, paymentMethod: 'cash' });
    expect(cash.status).toBe(201);
    cashOrderId = cash.body.order.orderId;
    keyOf = { ...h.keys, vendor: await vendorKey(h, VENDOR) };
  });

  afterAll(async () => {
    await h?.close();
  });

  const order = () => ({ clientReference: uniqueRef('o'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e2', totalPaise: 10_000, subsidyPaise: 10_000, customerSharePaise: 0, paymentMethod: 'online' });
  const reason = { reason: 'checked with the vendor' };
  const ROWS: Row[] = [
    { method: 'POST', url: '/v1/orders', path: () => '/v1/orders', body: order },
    { method: 'GET', url: '/v1/orders/:orderId', path: () => `/v1/orders/${cashOrderId}` },
    { method: 'POST', url: '/v1/orders/:orderId/cash-confirmation', path: () => `/v1/orders/${cashOrderId}/cash-confirmation` },
    { method: 'POST', url: '/v1/orders/:orderId/cancel', path: () => '/v1/orders/ord_nothing/cancel' },
    { method: 'POST', url: '/v1/wallets/:ownerKind/:ownerId/top-ups', path: () => `/v1/wallets/employer/${EMPLOYER}/top-ups`, body: () => ({ amountPaise: 10_000 }) },
    { method: 'GET', url: '/v1/wallets/:ownerKind/:ownerId', path: () => `/v1/wallets/employer/${EMPLOYER}` },
    { method: 'GET', url: '/v1/top-ups/:topupId', path: () => '/v1/top-ups/top_nothing' },
    { method: 'POST', url: '/v1/admin/employers', path: () => '/v1/admin/employers', body: () => ({ id: 'emp_new', name: 'New' }) },
    { method: 'POST', url: '/v1/admin/vendors', path: () => '/v1/admin/vendors', body: () => ({ id: 'ven_new', name: 'New' }) },
    { method: 'PUT', url: '/v1/admin/employers/:employerId/employees/:employeeId', path: () => `/v1/admin/employers/${EMPLOYER}/employees/e-auth` },
    { method: 'GET', url: '/v1/admin/employers/:employerId/employees', path: () => `/v1/admin/employers/${EMPLOYER}/employees` },
    { method: 'PUT', url: '/v1/admin/employers/:employerId/vendors/:vendorId', path: () => `/v1/admin/employers/${EMPLOYER}/vendors/${VENDOR}`, body: () => ({ commissionBps: 1_900 }) },
    { method: 'PUT', url: '/v1/admin/vendors/:vendorId/bank-details', path: () => `/v1/admin/vendors/${VENDOR}/bank-details`, body: () => ({ accountNumber: '50100123456789', ifsc: 'HDFC0001234', beneficiaryName: 'Auth Vendor' }) },
    { method: 'GET', url: '/v1/admin/vendors/:vendorId/bank-details', path: () => `/v1/admin/vendors/${VENDOR}/bank-details` },
    { method: 'GET', url: '/ops/payouts/counters', path: () => '/ops/payouts/counters' },
    { method: 'GET', url: '/ops/payouts/:orderId', path: () => '/ops/payouts/ord_nothing' },
    { method: 'POST', url: '/ops/payouts/:orderId/retry', path: () => '/ops/payouts/ord_nothing/retry', body: () => reason },
    { method: 'POST', url: '/ops/payouts/:orderId/mark-paid-externally', path: () => '/ops/payouts/ord_nothing/mark-paid-externally', body: () => ({ ...reason, reference: 'UTR123456' }) },
    { method: 'POST', url: '/ops/payouts/:orderId/cancel', path: () => '/ops/payouts/ord_nothing/cancel', body: () => reason },
    { method: 'GET', url: '/ops/payouts', path: () => '/ops/payouts?status=parked' },
    { method: 'POST', url: '/ops/payouts/decisions', path: () => '/ops/payouts/decisions', body: () => ({ action: 'cancel', orderIds: ['ord_nothing'], ...reason }) },
    { method: 'POST', url: '/ops/payouts/:orderId/pay-offline', path: () => '/ops/payouts/ord_nothing/pay-offline', body: () => reason },
    { method: 'GET', url: '/ops/batches', path: () => '/ops/batches?status=open' },
    { method: 'GET', url: '/ops/batches/:batchId', path: () => `/ops/batches/batch_${'0'.repeat(30)}` },
    { method: 'POST', url: '/ops/batches/:batchId/close', path: () => `/ops/batches/batch_${'0'.repeat(30)}/close`, body: () => reason },
    { method: 'GET', url: '/ops/audit', path: () => '/ops/audit?limit=5' },
    { method: 'GET', url: '/ops/refunds', path: () => '/ops/refunds?status=rejected' },
    { method: 'GET', url: '/ops/webhooks/quarantine', path: () => '/ops/webhooks/quarantine?limit=5' },
    { method: 'POST', url: '/ops/webhooks/quarantine/:id/acknowledge', path: () => '/ops/webhooks/quarantine/999999/acknowledge', body: () => ({ note: 'read it' }) },
    { method: 'GET', url: '/ops/transfers/switch', path: () => '/ops/transfers/switch' },
    { method: 'POST', url: '/ops/transfers/pause', path: () => '/ops/transfers/pause', body: () => reason },
    { method: 'POST', url: '/ops/transfers/resume', path: () => '/ops/transfers/resume', body: () => reason },
    { method: 'POST', url: '/finance/recon/runs', path: () => '/finance/recon/runs', body: () => ({ from: '2026-08-01', to: '2026-08-02' }) },
    { method: 'GET', url: '/finance/recon/runs/:workflowId', path: () => '/finance/recon/runs/recon-2026-08-01-2026-08-02' },
    { method: 'GET', url: '/finance/recon/exceptions', path: () => '/finance/recon/exceptions' },
    // The success answer is CSV; the harness's http() parses JSON, so a bad filter gets a 400 envelope instead.
    { method: 'GET', url: '/finance/recon/exceptions.csv', path: () => '/finance/recon/exceptions.csv?severity=none' },
    { method: 'POST', url: '/finance/recon/exceptions/:id/resolve', path: () => '/finance/recon/exceptions/999999/resolve', body: () => ({ note: 'not ours' }) },
    { method: 'POST', url: '/finance/bank-statements', path: () => '/finance/bank-statements', body: () => ({ csv: 'nonsense' }) },
    // Settlement runs (this harness has no Temporal client: finance gets 503 on the run routes, never 401/403).
    { method: 'POST', url: '/finance/settlement/runs', path: () => '/finance/settlement/runs', body: () => ({ from: '2026-08-01', to: '2026-08-02' }) },
    { method: 'GET', url: '/finance/settlement/runs/:workflowId', path: () => '/finance/settlement/runs/settlement-2026-08-01-2026-08-02' },
    { method: 'GET', url: '/finance/settlement/batches', path: () => '/finance/settlement/batches' },
    { method: 'GET', url: '/finance/settlement/batches/:batchId', path: () => '/finance/settlement/batches/stb_AAAAAAAAAAAAAA' },
    { method: 'GET', url: '/finance/settlement/batches/:batchId/bank-file', path: () => '/finance/settlement/batches/stb_AAAAAAAAAAAAAA/bank-file' },
    { method: 'POST', url: '/finance/settlement/batches/:batchId/cancel', path: () => '/finance/settlement/batches/stb_AAAAAAAAAAAAAA/cancel', body: () => reason },
    { method: 'POST', url: '/finance/settlement/lines/:reference/paid', path: () => '/finance/settlement/lines/STAAAAAAAA0001/paid', body: () => ({ utr: 'HDFC123456', paidOn: '2026-08-02' }) },
    { method: 'POST', url: '/finance/settlement/lines/:reference/failed', path: () => '/finance/settlement/lines/STAAAAAAAA0001/failed', body: () => reason },
    { method: 'POST', url: '/finance/settlement/bank-responses', path: () => '/finance/settlement/bank-responses', body: () => ({ csv: 'nonsense' }) },
    // A vendor key reads its own statement (the vendor key here is VENDOR's); the others are checked in statements.test.ts.
    { method: 'GET', url: '/v1/vendors/:vendorId/statement', path: () => `/v1/vendors/${VENDOR}/statement?from=2026-08-01&to=2026-08-02` },
  ];
  const PUBLIC = ['GET /health', 'GET /ready', 'POST /webhooks/razorpay', 'POST /v1/orders/:orderId/payment-callback', 'GET /openapi.json', 'GET /metrics'];

  test('when the routes are listed, then each one is in this table or declared public for a stated reason', () => {
    // The Swagger UI's own routes (/docs/…) are documentation, public by declaration in routeAuth.
    // Console routes (/console/…) are pages behind a session cookie, covered by test/integration/console.*.test.ts.
    const registered = declaredRoutes(h.app).filter((r) => !r.url.startsWith('/docs') && !r.url.startsWith('/console'));
    const tabled = new Set(ROWS.map((r) => `${r.method} ${r.url}`));
    for (const route of registered) {
      const name = `${route.method} ${route.url}`;
      if ('public' in route.auth) expect(PUBLIC).toContain(name);
      else expect(tabled.has(name) ? name : `${name} has no row in the auth table`).toBe(name);
    }
    expect(registered.filter((r) => !('public' in r.auth))).toHaveLength(ROWS.length);
  });

  const ALL: RoleRequirement[] = ['ordering', 'ops', 'admin', 'finance', 'vendor'];

  test.each(ROWS.map((r) => [`${r.method} ${r.url}`, r] as const))('%s: no key → 401, a wrong role → 403, the right role → answered', async (_name, row) => {
    const route = declaredRoutes(h.app).find((r) => r.method === row.method && r.url === row.url)!;
    expect(route).toBeDefined();
    const roles = 'roles' in route.auth ? route.auth.roles : [];
    const anonymous = await fetch(`${h.baseUrl}${row.path()}`, { method: row.method, headers: row.body ? { 'content-type': 'application/json' } : {}, body: row.body ? JSON.stringify(row.body()) : undefined });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="payouts"');
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('unauthorized');

    const wrong = ALL.find((r) => !roles.includes(r))!;
    const refused = await http(h, row.method, row.path(), row.body?.(), keyOf[wrong]);
    expect([wrong, refused.status, refused.body.error.code]).toEqual([wrong, 403, 'forbidden']);

    for (const role of roles) {
      const answered = await http(h, row.method, row.path(), row.body?.(), keyOf[role]);
      expect([role, answered.status]).toEqual([role, expect.any(Number)]);
      expect([401, 403, 500]).not.toContain(answered.status);
    }
  });

  test('when a key is malformed, unknown or revoked, then 401 with error="invalid_token"', async () => {
    const key = await mintKey(h.db, ['ops'], 'ops-to-revoke');
    expect((await http(h, 'GET', '/ops/payouts/counters', undefined, key)).status).toBe(200);
    await revokeApiKey(h.db, 'ops-to-revoke', 'test');
    const presented = [key, { authorization: 'Bearer not-a-key' }, { authorization: key.authorization.slice(0, -4) + 'AAAA' }];
    for (const headers of presented) {
      const res = await fetch(`${h.baseUrl}/ops/payouts/counters`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="payouts", error="invalid_token"');
    }
  });

  test('when an anonymous caller places a fully subsidised order (nothing to collect), then 401 and nothing is written', async () => {
    const before = await snapshot(h.db);
    const res = await http(h, 'POST', '/v1/orders', order(), {});
    expect(res.status).toBe(401);
    expect(await snapshot(h.db)).toEqual(before);
  });

  test('when a vendor key confirms another vendor\'s cash order, then 403 and the order stays unpaid; its own vendor confirms it, audited with the key', async () => {
    const other = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef('cash'), employerId: EMPLOYER, vendorId: OTHER_VENDOR, employeeId: 'e3', totalPaise: 10_000, subsidyPaise: 2_000, customerSharePaise: 8_000, paymentMethod: 'cash' });
    const orderId = other.body.order.orderId as string;
    const before = await snapshot(h.db);
    const refused = await http(h, 'POST', `/v1/orders/${orderId}/cash-confirmation`, undefined, keyOf.vendor);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    expect(await snapshot(h.db)).toEqual(before);

    const own = await vendorKey(h, OTHER_VENDOR);
    const confirmed = await http(h, 'POST', `/v1/orders/${orderId}/cash-confirmation`, undefined, { ...own, 'x-actor': 'Ravi at the counter' });
    expect(confirmed.body.order.status).toBe('paid');
    const { rows } = await h.db.query('SELECT paid_confirmed_by FROM orders WHERE id = $1', [orderId]);
    expect(rows[0].paid_confirmed_by).toMatch(/^key:test-vendor-ven_other-\d+ \(Ravi at the counter\)$/);
  });

  test('when ops pauses transfers with X-Actor, then the audit row names the key and the person; X-Actor alone is not a credential', async () => {
    expect((await http(h, 'POST', '/ops/transfers/pause', reason, { 'x-actor': 'mallory' })).status).toBe(401);
    await http(h, 'POST', '/ops/transfers/pause', reason, { ...h.keys.ops, 'x-actor': 'Asha' });
    await http(h, 'POST', '/ops/transfers/resume', reason, h.keys.ops);
    const { rows } = await h.db.query(`SELECT actor, action FROM review_actions WHERE payout_id IS NULL ORDER BY id DESC LIMIT 2`);
    expect(rows.reverse()).toEqual([{ actor: 'key:test-ops (Asha)', action: 'pause_transfers' }, { actor: 'key:test-ops', action: 'resume_transfers' }]);
  });
});
