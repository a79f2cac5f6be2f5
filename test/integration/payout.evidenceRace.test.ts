/** Settlement evidence names a transfer; it moves a payout only while the payout still holds that
 * transfer under its row lock. Found by CI under load (transfers.webhookHints): the transfer.failed of
 * an attempt's old transfer found the payout by that transfer id while the next attempt's request was
 * in flight, waited on the row lock, and once the next attempt's transfer was accepted released the
 * payout "failed after accept" with a fresh key — a third transfer, and the vendor paid twice. Real
 * PostgreSQL; the interleaving is forced with a transaction that holds the row. */
import type { RzpTransfer } from '../../src/gateway/types';
import { inTransaction, type Db } from '../../src/db/pool';
import { applyTransferEvidence } from '../../src/payouts/outcomes';
import { isolatedPool } from '../support/db';
import { attemptOutcomes, payoutRow, seedPaidOrder } from './payoutSeed';

const policy = { attemptCap: 5, retryBackoffMs: 200, retryBackoffMaxMs: 800, balanceProbeMs: 1_000 };

const transfer = (id: string, status: RzpTransfer['status'], payoutId: string): RzpTransfer => ({
  id, entity: 'transfer', status, source: 'acc_platform', recipient: 'acc_Race0000000001', amount: 8_100, currency: 'INR', amount_reversed: 0,
  notes: { transaction_id: payoutId, order_id: 'ord' }, created_at: 0,
  ...(status === 'failed' ? { error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', description: 'x', reason: 'x', field: null, step: null, source: null, metadata: null } } : {}),
} as unknown as RzpTransfer);

describe('payouts: evidence about a transfer the payout no longer holds', () => {
  let db: Db;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
  });
  afterAll(async () => {
    await db?.end();
  });

  test('when an old transfer\'s failure is applied while the next attempt\'s transfer is being accepted, then the accepted payout keeps its transfer and key', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_Race0000000001' });
    const payoutId = order.payoutId!;
    // Attempt 1's transfer failed and was recorded; attempt 2 is claimed and its request is in flight,
    // so the row still names attempt 1's transfer.
    await db.query(`UPDATE payouts SET status = 'processing', attempts = 2, provider_transfer_id = 'trf_OldFailed00001', idempotency_key = 'key-attempt-2' WHERE id = $1`, [payoutId]);
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => { locked = r; });
    // Attempt 2's answer: accepted as trf_NewAccepted0001, committed while the evidence waits on the lock.
    const accepting = inTransaction(db, async (tx) => {
      await tx.query('SELECT 1 FROM payouts WHERE id = $1 FOR UPDATE', [payoutId]);
      locked();
      await held;
      await tx.query(`UPDATE payouts SET status = 'accepted', provider_transfer_id = 'trf_NewAccepted0001' WHERE id = $1`, [payoutId]);
    });
    await isLocked;
    const evidence = inTransaction(db, (tx) => applyTransferEvidence(tx, { transfer: transfer('trf_OldFailed00001', 'failed', payoutId), source: 'webhook transfer.failed', policy }));
    await new Promise((r) => setTimeout(r, 300)); // the evidence has found the row by the old id and waits on the lock
    release();
    await accepting;
    const applied = await evidence;
    expect(applied?.moved ?? false).toBe(false);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'accepted', attempts: 2, provider_transfer_id: 'trf_NewAccepted0001', idempotency_key: 'key-attempt-2' });
    expect(await attemptOutcomes(db, payoutId)).toEqual([]);
  });
});
