/** The checker against our ledger (issue 36: obligations, discharges, items; docs/ledger.md). Per
 * vendor, what the provider's ledger (transfers made to its account, what reversals took back) and the
 * bank debits (settlement lines finance paid) say is still owed must be the ledger's open balance, with
 * nothing in flight once the system is quiet; every transfer at the provider is exactly one transfer
 * discharge of its amount, and the other way round; no obligation has two active instruments; and the
 * database itself still refuses a second instrument and an unbalanced discharge (probed in a
 * transaction that is rolled back: a build without the constraint is caught even when no path of the
 * run wrote a double). */
import type { Pool } from 'pg';
import type { RzpTransfer } from '../../src/gateway/types';
import type { DbLedger, ProviderLedger } from './checker';
import type { OfflineSettlement } from './offline';
import { campaignVendors, type OrderHistory, type World } from './workload';

export interface LedgerResult { violations: string[]; vendors: number; transferDischarges: number; mismatches: number; probes: string[] }

const n = (v: string | number) => Number(v);
/** A transfer that reached the vendor (a reversal later takes back `amount_reversed`). */
const madeIt = (t: RzpTransfer) => t.status === 'processed' || t.status === 'reversed' || t.status === 'partially_reversed';
const TRANSFER_KINDS = ['order_transfer', 'batch_transfer', 'external_transfer'];

/** What the evidence says each vendor is still owed: its paid orders' nets (a cash order's share the
 * counter did not pay; nothing for the employer's own), plus what reversals took back, minus what its
 * account received and the bank paid, minus the clawbacks its customers' refunds made owed back. */
export function evidenceOwed(histories: readonly OrderHistory[], db: DbLedger, provider: ProviderLedger, settlement: OfflineSettlement, accountOf: Map<string, string | null>): Map<string, { owed: number; notes: string[] }> {
  const out = new Map<string, { owed: number; notes: string[] }>();
  const of = (vendorId: string) => out.get(vendorId) ?? out.set(vendorId, { owed: 0, notes: [] }).get(vendorId)!;
  for (const vendorId of accountOf.keys()) of(vendorId);
  for (const h of histories) {
    const order = h.orderId ? db.orders.get(h.orderId) : undefined;
    if (!order || order.status !== 'paid' || !accountOf.has(order.vendorId)) continue;
    const v = of(order.vendorId);
    if (db.obligations.has(h.orderId!)) continue; // corporate_direct: the employer pays the vendor
    v.owed += h.planned.paymentMethod === 'cash' ? order.subsidyPaise - order.commissionPaise : order.vendorNetPaise;
    for (const r of db.outsideRefunds.filter((x) => x.orderId === h.orderId && x.action === 'owed_back')) v.owed -= r.clawbackPaise ?? 0;
    // A reversal our rows never heard of: only recon can tell (reversal-not-in-app, required in recon.ts).
    if (h.reversed && !h.reversed.seen) {
      const t = provider.transfers.find((x) => x.id === h.reversed!.transferId);
      v.owed -= t?.amount_reversed ?? 0;
      v.notes.push(`${t?.amount_reversed ?? 0} paise reversed by ${h.reversed.reversalId}, unheard by our rows`);
    }
  }
  const vendorOfAccount = new Map([...accountOf].filter(([, a]) => a !== null).map(([vendorId, a]) => [a!, vendorId]));
  for (const t of provider.transfers.filter(madeIt)) {
    const vendorId = vendorOfAccount.get(t.recipient);
    if (!vendorId) continue;
    of(vendorId).owed += (t.amount_reversed ?? 0) - t.amount;
  }
  for (const line of settlement.paid) if (accountOf.has(line.vendorId)) of(line.vendorId).owed -= line.amountPaise;
  return out;
}

export async function checkLedger(db: Pool, histories: readonly OrderHistory[], world: World, dbLedger: DbLedger, provider: ProviderLedger, settlement: OfflineSettlement): Promise<LedgerResult> {
  const vendors = campaignVendors(world, histories);
  const accountOf = new Map(vendors.map((v) => [v.vendorId, v.account]));
  const vendorIds = [...accountOf.keys()];
  const violations: string[] = [];
  const [balances, doubles, discharges] = await Promise.all([
    db.query<{ vendor_id: string; owed_paise: string; paid_paise: string; in_flight_paise: string; open_paise: string }>(
      'SELECT vendor_id, owed_paise, paid_paise, in_flight_paise, open_paise FROM ledger_vendor_balances WHERE vendor_id = ANY($1)', [vendorIds]),
    db.query<{ vendor_id: string; source: string; n: string }>(
      `SELECT o.vendor_id, o.source, count(*) AS n FROM ledger_discharge_items i JOIN ledger_obligations o ON o.id = i.obligation_id
        WHERE i.active AND o.vendor_id = ANY($1) GROUP BY 1, 2 HAVING count(*) > 1`, [vendorIds]),
    db.query<{ vendor_id: string; kind: string; provider_ref: string | null; amount_paise: string; state: string }>(
      `SELECT vendor_id, kind, provider_ref, amount_paise, state FROM ledger_discharges
        WHERE vendor_id = ANY($1) AND kind = ANY($2::text[]) AND state <> 'void'`, [vendorIds, TRANSFER_KINDS]),
  ]);
  for (const d of doubles.rows) violations.push(`ledger: obligation ${d.source} of ${d.vendor_id} has ${d.n} active discharges at once`);

  const evidence = evidenceOwed(histories, dbLedger, provider, settlement, accountOf);
  const byVendor = new Map(balances.rows.map((b) => [b.vendor_id, b]));
  let mismatches = 0;
  for (const [vendorId, e] of evidence) {
    const b = byVendor.get(vendorId);
    const open = b ? n(b.open_paise) : 0;
    const inFlight = b ? n(b.in_flight_paise) : 0;
    if (open !== e.owed || inFlight !== 0) {
      mismatches += 1;
      violations.push(`ledger: vendor ${vendorId} is open ${open} paise (owed ${b?.owed_paise ?? 0}, paid ${b?.paid_paise ?? 0}, in flight ${inFlight}), the provider's transfers and the bank debits say ${e.owed} still owed${e.notes.length ? ` (${e.notes.join('; ')})` : ''}`);
    }
  }

  // Every transfer the provider made from the platform balance to a campaign vendor is one transfer
  // discharge of its amount (a reversed one stays paid: the money did reach the vendor), and the other way.
  const platform = provider.transfers.filter((t) => madeIt(t) && provider.platformAccountSource(t));
  const accounts = new Map([...accountOf].filter(([, a]) => a !== null).map(([vendorId, a]) => [a!, vendorId]));
  let matched = 0;
  for (const t of platform.filter((x) => accounts.has(x.recipient))) {
    const named = discharges.rows.filter((d) => d.provider_ref === t.id);
    if (named.length === 1 && n(named[0]!.amount_paise) === t.amount && named[0]!.state === 'paid' && named[0]!.vendor_id === accounts.get(t.recipient)) matched += 1;
    else violations.push(`ledger: transfer ${t.id} of ${t.amount} paise to ${t.recipient} (${t.status}) is ${named.length === 0 ? 'in no discharge' : `in ${named.map((d) => `${d.kind} ${d.state} of ${d.amount_paise} for ${d.vendor_id}`).join(', ')}`}`);
  }
  const atProvider = new Set(platform.map((t) => t.id));
  for (const d of discharges.rows) {
    if (d.state === 'paid' && d.provider_ref?.startsWith('trf_') && !atProvider.has(d.provider_ref)) violations.push(`ledger: ${d.kind} discharge of ${d.amount_paise} paise for ${d.vendor_id} names ${d.provider_ref}, which the provider never made`);
    if (d.state === 'in_flight') violations.push(`ledger: ${d.kind} discharge ${d.provider_ref ?? '(no transfer yet)'} of ${d.vendor_id} still in flight once the system is quiet`);
  }
  const probes = await probeConstraints(db, vendorIds, violations);
  return { violations, vendors: evidence.size, transferDischarges: matched, mismatches, probes };
}

/** Asks the database to write what its constraints forbid, and rolls back: a second active instrument
 * for an obligation already paid (the partial unique index), and a discharge paying nothing for its
 * amount (the deferred balance trigger, made immediate). Each must be refused. */
async function probeConstraints(db: Pool, vendorIds: string[], violations: string[]): Promise<string[]> {
  const { rows } = await db.query<{ obligation_id: string; vendor_id: string; amount_paise: string }>(
    `SELECT i.obligation_id, o.vendor_id, o.amount_paise FROM ledger_discharge_items i JOIN ledger_discharges d ON d.id = i.discharge_id
       JOIN ledger_obligations o ON o.id = i.obligation_id WHERE i.active AND d.state = 'paid' AND o.vendor_id = ANY($1) ORDER BY i.obligation_id LIMIT 1`, [vendorIds]);
  const paid = rows[0];
  if (!paid) {
    violations.push('ledger: no paid obligation to probe the constraints with');
    return [];
  }
  const attempt = async (what: string, expectedCode: string, steps: (q: (sql: string, args?: unknown[]) => Promise<{ rows: Array<{ id: string }> }>) => Promise<void>): Promise<string> => {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await steps((sql, args) => client.query<{ id: string }>(sql, args));
      violations.push(`ledger: the database accepted ${what}`);
      return `${what}: ACCEPTED`;
    } catch (err) {
      const code = (err as { code?: string }).code ?? '?';
      if (code !== expectedCode) violations.push(`ledger: ${what} was refused with ${code}, expected ${expectedCode}: ${String(err)}`);
      return `${what}: refused (${code})`;
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  };
  const discharge = (q: (sql: string, args?: unknown[]) => Promise<{ rows: Array<{ id: string }> }>, tag: string) => q(
    `INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state) VALUES ($1, 'adjustment', $2, $3, 'paid') RETURNING id::text`,
    [paid.vendor_id, `campaign-probe-${tag}-${paid.obligation_id}`, paid.amount_paise]);
  return [
    await attempt('a second active discharge of a paid obligation', '23505', async (q) => {
      const { rows: [d] } = await discharge(q, 'second');
      await q('INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise) VALUES ($1, $2, $3)', [d!.id, paid.obligation_id, paid.amount_paise]);
    }),
    await attempt('a discharge whose items do not add up to its amount', '23514', async (q) => {
      await discharge(q, 'unbalanced');
      await q('SET CONSTRAINTS ALL IMMEDIATE');
    }),
  ];
}
