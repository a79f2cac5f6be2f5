/** Recon's pull step streams: pages go through COPY into a temporary stage, upserted on entity id +
 * settlement id every 25,000 rows and at the end (storeReconPages): the last row reported for a key
 * wins (within a chunk and across chunks), a null settlement is one key, text that COPY must escape
 * survives byte for byte, a rerun adds nothing, and a bad row anywhere stores nothing. */
import type { Db } from '../../src/db/pool';
import type { RzpReconRow } from '../../src/gateway/types';
import { storeReconPages } from '../../src/recon/repository';
import { isolatedPool } from '../support/db';

let db: Db;
beforeAll(async () => {
  ({ db } = await isolatedPool());
});
afterAll(async () => {
  await db.end();
});

const DAY = '2026-10-05';
function row(entityId: string, overrides: Partial<RzpReconRow> = {}): RzpReconRow {
  return {
    entity_id: entityId, type: 'payment', debit: 0, credit: 9764, amount: 10_000, fee: 236, tax: 36, on_hold: false, settled: true,
    created_at: 1_791_000_000, settled_at: 1_791_200_000, settlement_id: 'setl_stream_1', payment_id: null, order_id: 'order_s1',
    order_receipt: 'ord_s1', settlement_utr: 'UTR123', notes: {}, ...overrides,
  } as RzpReconRow;
}
async function* asPages(pages: RzpReconRow[][]): AsyncIterable<RzpReconRow[]> {
  for (const p of pages) yield p;
}
const stored = async (like: string) =>
  (await db.query(`SELECT entity_id, settlement_id, amount_paise, order_receipt, raw, to_char(recon_day, 'YYYY-MM-DD') AS day FROM recon_rows WHERE entity_id LIKE $1 ORDER BY entity_id, settlement_id`, [like])).rows;

test('when pages stream in, then every row is stored once per entity + settlement, the last one reported winning', async () => {
  const progress: number[] = [];
  const result = await storeReconPages(db, DAY, asPages([
    [row('pay_str_1'), row('pay_str_2', { amount: 1 })],
    [row('pay_str_2', { amount: 2 }), row('pay_str_3', { settlement_id: null, settled: false, settled_at: null })],
    [],
    [row('pay_str_3', { settlement_id: null, settled: false, settled_at: null, amount: 3 }), row('pay_str_1', { settlement_id: 'setl_stream_2' })],
  ]), (n) => progress.push(n));
  expect(result).toEqual({ rows: 4, received: 6, settlementIds: ['setl_stream_1', 'setl_stream_2'] });
  expect(progress).toEqual([2, 4, 6]);
  const rows = await stored('pay_str_%');
  expect(rows.map((r) => [r.entity_id, r.settlement_id, r.amount_paise, r.day])).toEqual([
    ['pay_str_1', 'setl_stream_1', 10_000, DAY], ['pay_str_1', 'setl_stream_2', 10_000, DAY], ['pay_str_2', 'setl_stream_1', 2, DAY], ['pay_str_3', null, 3, DAY],
  ]);

  const again = await storeReconPages(db, DAY, [[row('pay_str_2', { amount: 7 })]]);
  expect(again.rows).toBe(1);
  expect((await stored('pay_str_%')).map((r) => r.amount_paise)).toEqual([10_000, 10_000, 7, 3]);
});

test('when a row carries tabs, newlines, backslashes and unicode, then it is stored exactly as received', async () => {
  const nasty = 'a\tb\nc\rd\\e\\\\N ₹ "q" \u0001';
  const raw = row('pay_str_esc', { order_receipt: nasty, notes: { transaction_id: nasty, free: 'x\\ty' } });
  await storeReconPages(db, DAY, [[raw]]);
  const [r] = await stored('pay_str_esc');
  expect(r.order_receipt).toBe(nasty);
  expect(r.raw).toEqual(raw);
});

test('when a page holds a row that fails validation, then nothing of the day is stored and the error surfaces', async () => {
  const bad = { ...row('pay_str_bad_2'), amount: 'lots' } as unknown as RzpReconRow;
  await expect(storeReconPages(db, DAY, asPages([[row('pay_str_bad_1')], [bad]]))).rejects.toThrow();
  expect(await stored('pay_str_bad_%')).toEqual([]);
  // The connection went back to the pool usable, and the stage of the failed call is gone.
  expect((await storeReconPages(db, DAY, [[row('pay_str_bad_1')]])).rows).toBe(1);
});

test('when 25,000 rows stream in 25 pages, then all are stored', async () => {
  const pages = Array.from({ length: 25 }, (_, p) => Array.from({ length: 1000 }, (_, i) => row(`pay_str_many_${p}_${i}`)));
  const result = await storeReconPages(db, DAY, asPages(pages));
  expect(result.rows).toBe(25_000);
  expect((await db.query(`SELECT count(*)::int AS n FROM recon_rows WHERE entity_id LIKE 'pay_str_many_%'`)).rows[0].n).toBe(25_000);
});

test('when a key reported in the first chunk is reported again after the chunk was upserted, then it is one row, the later one, counted once', async () => {
  const pages = Array.from({ length: 25 }, (_, p) => Array.from({ length: 1000 }, (_, i) => row(`pay_str_chunk_${p}_${i}`)));
  pages.push([row('pay_str_chunk_0_0', { amount: 4242 }), row('pay_str_chunk_new')]);
  const result = await storeReconPages(db, DAY, asPages(pages));
  expect(result).toMatchObject({ rows: 25_001, received: 25_002 });
  expect((await stored('pay_str_chunk_0_0')).map((r) => r.amount_paise)).toEqual([4242]);
});
