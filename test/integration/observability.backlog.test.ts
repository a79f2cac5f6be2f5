/** The provider backlog against real PostgreSQL and the Razorpay sandbox, through the API: payouts in
 * every waiting state counted by call class in the ops counters and in /metrics, the ETA at the
 * configured write rate against its bound, the balance wall with the amount it needs (rupees with
 * Indian grouping), the backlog's read through the open-payouts index, and a 429 from the provider
 * counted by endpoint. No Temporal worker: the rows are set as the payout workflow leaves them. */
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { GatewayCallError } from '../../src/gateway/types';
import { PAYOUT_BACKLOG_SQL, readPayoutBacklog } from '../../src/payouts/backlog';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { mintRoleKeys, type RoleKeys } from '../support/apiKeys';
import { isolatedPool } from '../support/db';
import { backlogSeriesOf, parsePrometheusText, sampleValue } from '../unit/observability.promText';
import { seedPaidOrder } from './payoutSeed';

/** How each seeded payout is left, and what it needs from Razorpay. */
const STATES = {
  pending: `status = 'pending'`,
  failedDue: `status = 'failed', next_attempt_at = now() - interval '1 minute'`,
  failedLater: `status = 'failed', next_attempt_at = now() + interval '10 minutes'`,
  claimed: `status = 'processing', attempts = 1, claimed_at = now(), request_sent_at = NULL`,
  inFlight: `status = 'processing', attempts = 1, claimed_at = now(), request_sent_at = now()`,
  // Its first attempt's answer was lost and resolved; the second claim's request is in flight.
  inFlightAfterUnknown: `status = 'processing', attempts = 2, claimed_at = now(), request_sent_at = now()`,
  unknown: `status = 'processing', attempts = 1, claimed_at = now(), request_sent_at = now()`,
  accepted: `status = 'accepted', attempts = 1, provider_transfer_id = 'trf_Backlog0000001'`,
  parked: `status = 'parked', attempts = 5`,
  settled: `status = 'settled', attempts = 1, settled_at = now(), provider_transfer_id = 'trf_Backlog0000002'`,
} as const;

describe('the provider backlog, through the API', () => {
  let db: Db;
  let config: Config;
  let sandbox: RunningSandbox;
  let api: FastifyInstance;
  let apiUrl: string;
  let keys: RoleKeys;
  const amounts: Partial<Record<keyof typeof STATES, number>> = {};

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    const defaults = loadConfig();
    sandbox = await startSandbox({ keyId: defaults.RAZORPAY_KEY_ID, keySecret: defaults.RAZORPAY_KEY_SECRET, webhookSecret: defaults.RAZORPAY_WEBHOOK_SECRET });
    config = loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl, RAZORPAY_WRITE_RPS: '0.5', RAZORPAY_READ_RPS: '2', PAYOUT_BACKLOG_ETA_ALERT_SECONDS: '5' });
    api = await buildApi({ config, db, gateway: createGateway(config) });
    apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
    keys = await mintRoleKeys(db);
    for (const [state, set] of Object.entries(STATES) as Array<[keyof typeof STATES, string]>) {
      const order = await seedPaidOrder(db, { linkedAccountId: 'acc_Backlog0000001' });
      // One large amount, so the wall's rupees show Indian grouping.
      const amount = state === 'pending' ? 1_234_567_890 : order.vendorNetPaise;
      amounts[state] = amount;
      await db.query(`UPDATE payouts SET ${set}, amount_paise = $2 WHERE id = $1`, [order.payoutId, amount]);
      if (state === 'unknown' || state === 'inFlightAfterUnknown') {
        await db.query(`INSERT INTO payout_attempts (payout_id, attempt_no, idempotency_key, outcome) VALUES ($1, 1, $2, 'unknown')`, [order.payoutId, order.payoutId]);
      }
    }
  });

  afterAll(async () => {
    await api?.close();
    await sandbox?.close();
    await db?.end();
  });

  const counters = async () => {
    const res = await fetch(`${apiUrl}/ops/payouts/counters`, { headers: keys.ops });
    expect(res.status).toBe(200);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked field by field
    return (await res.json()) as any;
  };
  const scrape = async () => parsePrometheusText(await (await fetch(`${apiUrl}/metrics`)).text());

  test('when payouts wait in every state, then the backlog counts each by call class: only due ones (backoff over), claimed, in flight, lost answers and accepted ones', async () => {
    expect(await readPayoutBacklog(db)).toEqual({
      write: { due: 2, claimed: 1, inFlight: 2 },
      read: { unknown: 1, awaitingSettlement: 1 },
    });
  });

  test('when ops read the counters, then the backlog is there with its ETA at the configured write rate, past the bound, beside the counters they had', async () => {
    const body = await counters();
    expect(body).toMatchObject({ parkedPayouts: 1, unknownOutcomes: 2 });
    expect(body.backlog).toEqual({
      write: { due: 2, claimed: 1, inFlight: 2 },
      read: { unknown: 1, awaitingSettlement: 1 },
      // Three transfers still to request at 0.5 a second.
      etaSeconds: 6, etaAlertSeconds: 5, overEtaBound: true,
      budgetRps: { write: 0.5, read: 2 },
      balanceWall: null,
    });
  });

  test('when Prometheus scrapes, then the backlog, its ETA and bound, and the budget are series', async () => {
    expect(backlogSeriesOf(await scrape())).toEqual({
      writeDue: 2, writeClaimed: 1, writeInFlight: 2, readUnknown: 1, readAwaitingSettlement: 1,
      etaSeconds: 6, etaAlertSeconds: 5, writeRps: 0.5, readRps: 2, wallUp: 0, wallNeededPaise: 0,
    });
  });

  test('when the balance wall is up, then the counters and /metrics say what the waiting transfers need, in rupees with Indian grouping for people', async () => {
    // Pending, failed (due or not) and processing payouts: what the wall's probe must clear.
    const waiting = ['pending', 'failedDue', 'failedLater', 'claimed', 'inFlight', 'inFlightAfterUnknown', 'unknown'] as const;
    const needed = waiting.reduce((n, s) => n + amounts[s]!, 0);
    await db.query(`UPDATE transfer_switch SET balance_short_since = now() - interval '2 minutes', balance_short_code = 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' WHERE id = 1`);
    try {
      const { backlog } = await counters();
      expect(backlog.balanceWall).toMatchObject({
        code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', waitingPayouts: waiting.length,
        // ₹1,23,45,678.90 pending and six payouts of ₹81.00.
        needed: { paise: 1_234_616_490, rupees: '₹1,23,46,164.90' },
      });
      expect(needed).toBe(1_234_616_490);
      const families = await scrape();
      expect(sampleValue(families, 'payouts_balance_wall_up')).toBe(1);
      expect(sampleValue(families, 'payouts_balance_wall_needed_paise')).toBe(needed);
    } finally {
      await db.query('UPDATE transfer_switch SET balance_short_since = NULL, balance_short_code = NULL WHERE id = 1');
    }
    expect((await counters()).backlog.balanceWall).toBeNull();
  });

  test('when the backlog is read, then PostgreSQL can answer it from the open-payouts partial index, not a scan of every payout ever made', async () => {
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${PAYOUT_BACKLOG_SQL}`);
      expect(JSON.stringify(rows[0]!['QUERY PLAN'])).toMatch(/"Index Name":"payouts_open_by_age"/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  test('when Razorpay answers 429, then the call is counted rate_limited for its endpoint; the next call is counted by its own answer', async () => {
    const read = async (outcome: string) => sampleValue(await scrape(), 'payouts_provider_calls_total', { endpoint: 'transfers.fetch', outcome }) ?? NaN;
    const [limitedBefore, rejectedBefore] = [await read('rate_limited'), await read('rejected')];
    // Present before the first 429, so rate() sees it rise.
    expect(limitedBefore).toBe(0);
    const gateway = createGateway(config);
    await sandbox.control.injectFault({ endpoint: 'transfers.fetch', fault: { kind: 'rate_limited' }, calls: [1] });
    const refused = await gateway.fetchTransfer('trf_NotAtSandbox01').then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(GatewayCallError);
    expect((refused as GatewayCallError).outcome).toMatchObject({ type: 'unknown', reason: 'rate_limited', httpStatus: 429 });
    expect(await read('rate_limited')).toBe(limitedBefore + 1);
    // No such transfer: the provider's definitive no, not a 429.
    const missing = await gateway.fetchTransfer('trf_NotAtSandbox01').then(() => null, (err: unknown) => err);
    expect((missing as GatewayCallError).outcome).toMatchObject({ type: 'rejected' });
    expect([await read('rate_limited'), await read('rejected')]).toEqual([limitedBefore + 1, (Number.isNaN(rejectedBefore) ? 0 : rejectedBefore) + 1]);
  });
});
