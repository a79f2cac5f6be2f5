/** The COPY baseline of `npm run bench:recon`: PostgreSQL COPY of the same gateway rows into a
 * staging table with recon_rows' key (entity id + settlement id, NULLS NOT DISTINCT). It shares no
 * code with what the bench measures: its own encoding (done once, untimed, into a file), its own
 * table, its own COPY; timed is only streaming the file into the table. */
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const COLUMNS = 'entity_id, settlement_id, type, amount, fee, tax, credit, debit, on_hold, settled, created_at, settled_at, payment_id, order_id, order_receipt, settlement_utr, raw';

const esc = (v: unknown): string => {
  if (v === null || v === undefined) return '\\N';
  const s = typeof v === 'string' ? v : String(v);
  return s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
};

/** Appends raw gateway rows (as the API returned them) to a COPY text file. */
export function appendCopyFile(file: string, rows: ReadonlyArray<Record<string, unknown>>): void {
  if (rows.length === 0) return;
  const lines: string[] = [];
  for (const r of rows) {
    lines.push([r.entity_id, r.settlement_id, r.type, r.amount, r.fee, r.tax, r.credit, r.debit, r.on_hold, r.settled,
      new Date(Number(r.created_at) * 1000).toISOString(), r.settled_at == null ? null : new Date(Number(r.settled_at) * 1000).toISOString(),
      r.payment_id, r.order_id, r.order_receipt, r.settlement_utr, JSON.stringify(r)].map(esc).join('\t'));
  }
  fs.appendFileSync(file, `${lines.join('\n')}\n`);
}

export async function createBaselineTable(pool: Pool): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS copy_baseline (
    entity_id text NOT NULL, settlement_id text, type text NOT NULL, amount bigint NOT NULL, fee bigint, tax bigint, credit bigint NOT NULL,
    debit bigint NOT NULL, on_hold boolean NOT NULL, settled boolean NOT NULL, created_at timestamptz NOT NULL, settled_at timestamptz,
    payment_id text, order_id text, order_receipt text, settlement_utr text, raw jsonb NOT NULL,
    UNIQUE NULLS NOT DISTINCT (entity_id, settlement_id))`);
}

/** Empties the table (untimed), then COPYs the file into it; returns rows and milliseconds. */
export async function copyBaseline(pool: Pool, file: string): Promise<{ rows: number; ms: number }> {
  await pool.query('TRUNCATE copy_baseline');
  const client = await pool.connect();
  try {
    const started = process.hrtime.bigint();
    const stream = client.query(copyFrom(`COPY copy_baseline (${COLUMNS}) FROM STDIN`));
    await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), stream);
    return { rows: stream.rowCount, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  } finally {
    client.release();
  }
}
