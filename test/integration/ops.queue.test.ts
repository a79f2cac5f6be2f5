/** The ops surface for the human queue, over real HTTP against a real worker and the sandbox: the
 * queue with amounts, reasons in words and Web UI links; filters and pages; bulk decisions answered
 * per order and audited; a repeated decision is a success; the audit trail by actor. */
import { payoutWorkflowId } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { readRunDetails } from '../../src/temporal/runDetails';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { eventually, payoutRow, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

describe('ops: the payout queue, bulk decisions and the audit trail', () => {
  let stack: PayoutStack;
  let db: Db;
  const parked: Array<{ orderId: string; vendorId: string; payoutId: string }> = [];

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'ops-queue', env: { PAYOUT_HUMAN_RECHECK_MS: '60000' } });
    ({ db } = stack);
    const starter = temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, db);
    for (let i = 0; i < 3; i++) {
      const account = await stack.sandbox.control.createLinkedAccount({ status: 'suspended' });
      const o = await seedPaidOrder(db, { linkedAccountId: account });
      await starter.startPayout(o.orderId);
      parked.push({ orderId: o.orderId, vendorId: o.vendorId, payoutId: o.payoutId! });
    }
    for (const p of parked) await eventually(() => payoutRow(db, p.orderId), (r) => r?.status === 'parked', 20_000);
    // The first has waited two hours.
    await db.query(`UPDATE payouts SET updated_at = now() - interval '2 hours' WHERE id = $1`, [parked[0]!.payoutId]);
  });

  afterAll(async () => {
    await stack?.close();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
  const call = async (method: string, path: string, body?: unknown, person = 'Asha'): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { ...stack.keys.ops, 'x-actor': person, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    return { status: res.status, body: await res.json() };
  };

  test('when ops list the queue, then each parked payout shows its amount in rupees and paise, the reason in words and as the code, its age and the Web UI link, oldest first', async () => {
    const { status, body } = await call('GET', '/ops/payouts');
    expect(status).toBe(200);
    const listed = body.items.map((i: { orderId: string }) => i.orderId);
    expect(listed[0]).toBe(parked[0]!.orderId); // waited longest
    expect([...listed].sort()).toEqual(parked.map((p) => p.orderId).sort());
    expect(body.items[0]).toMatchObject({
      status: 'parked',
      amount: { paise: 8_100, rupees: '₹81.00' },
      reason: { code: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT', words: "the vendor's linked account is suspended at Razorpay", nextStep: expect.stringContaining('retry') },
      attempts: 1,
      lastAttempt: { outcome: 'rejected', providerCode: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT' },
      webUiUrl: `http://127.0.0.1:8233/namespaces/default/workflows/payout-${parked[0]!.orderId}`,
    });
    expect(body.items[0].ageSeconds).toBeGreaterThanOrEqual(7_200);
  });

  test('when ops filter and page the queue, then vendor, reason and age narrow it and the cursor walks it', async () => {
    expect((await call('GET', `/ops/payouts?vendorId=${parked[1]!.vendorId}`)).body.items.map((i: { orderId: string }) => i.orderId)).toEqual([parked[1]!.orderId]);
    expect((await call('GET', '/ops/payouts?olderThan=1h')).body.items.map((i: { orderId: string }) => i.orderId)).toEqual([parked[0]!.orderId]);
    expect((await call('GET', '/ops/payouts?reason=BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID')).body.items).toEqual([]);
    const all = (await call('GET', '/ops/payouts')).body.items.map((i: { orderId: string }) => i.orderId);
    const first = await call('GET', '/ops/payouts?limit=2');
    expect(first.body.items.map((i: { orderId: string }) => i.orderId)).toEqual(all.slice(0, 2));
    const second = await call('GET', `/ops/payouts?limit=2&after=${encodeURIComponent(first.body.next)}`);
    expect(second.body.items.map((i: { orderId: string }) => i.orderId)).toEqual(all.slice(2));
    expect(second.body.next).toBeNull();
    const bad = await call('GET', '/ops/payouts?olderThan=soon');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_request']);
  });

  test('when ops cancel several payouts at once, then each is answered on its own and audited, and repeating it is a success', async () => {
    const ids = [parked[1]!.orderId, parked[2]!.orderId, 'ord_unknown'];
    const first = await call('POST', '/ops/payouts/decisions', { action: 'cancel', orderIds: ids, reason: 'vendors closed for good' });
    expect(first.status).toBe(200);
    expect(first.body.results).toEqual([
      { orderId: parked[1]!.orderId, result: 'applied', status: 'cancelled' },
      { orderId: parked[2]!.orderId, result: 'applied', status: 'cancelled' },
      { orderId: 'ord_unknown', result: 'not_found', status: null },
    ]);
    const again = await call('POST', '/ops/payouts/decisions', { action: 'cancel', orderIds: ids.slice(0, 2), reason: 'vendors closed for good' });
    expect(again.body.results.map((r: { result: string }) => r.result)).toEqual(['already_in_effect', 'already_in_effect']);
    const single = await call('POST', `/ops/payouts/${parked[1]!.orderId}/cancel`, { reason: 'clicked twice' });
    expect([single.status, single.body.alreadyInEffect]).toEqual([200, true]);
    const retryCancelled = await call('POST', `/ops/payouts/${parked[1]!.orderId}/retry`, { reason: 'changed my mind' });
    expect(retryCancelled.status).toBe(409);
    const noRef = await call('POST', '/ops/payouts/decisions', { action: 'mark_paid_externally', orderIds: [parked[0]!.orderId], reason: 'paid by NEFT' });
    expect(noRef.status).toBe(400);

    const audit = await call('GET', '/ops/audit?actor=Asha');
    const cancels = audit.body.entries.filter((e: { kind: string; action: string }) => e.kind === 'payout_decision' && e.action === 'cancel');
    expect(cancels.map((e: { subject: string; actor: string }) => [e.subject, e.actor]).sort()).toEqual([
      [parked[1]!.orderId, 'key:test-ops (Asha)'], [parked[2]!.orderId, 'key:test-ops (Asha)'],
    ].sort());
    expect((await call('GET', '/ops/audit?actor=nobody-at-all')).body.entries).toEqual([]);
  });

  test('when ops open a parked run in the Web UI, then it has a static summary and current details with the reason and the exact API calls', async () => {
    const { orderId, vendorId } = parked[0]!;
    const details = await readRunDetails(stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)));
    expect(details.summary).toBe(`₹81.00 to ${vendorId} for ${orderId}`);
    expect(details.currentDetails).toContain("**Waiting for ops.** the vendor's linked account is suspended at Razorpay");
    expect(details.currentDetails).toContain(`POST /ops/payouts/${orderId}/retry`);
    expect(details.currentDetails).toContain('a signal sent from here changes nothing');
  });

  test('when ops open one payout, then its reason, attempts with the raw answer, decisions and order are shown', async () => {
    const { body } = await call('GET', `/ops/payouts/${parked[0]!.orderId}`);
    expect(body).toMatchObject({
      payout: { status: 'parked' },
      reason: { code: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT' },
      order: { orderId: parked[0]!.orderId, vendorNetPaise: 8_100 },
      attempts: [{ outcome: 'rejected', raw: expect.objectContaining({ type: 'rejected' }) }],
    });
  });
});
