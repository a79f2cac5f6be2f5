import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { isolatedPool } from '../support/db';
import { mintKey } from '../support/apiKeys';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../fixtures/recon', name), 'utf8');
const config = loadConfig();
let auth: Record<string, string>;
let opsKey: Record<string, string>;

describe('finance API: bank statements and exception resolution (real PostgreSQL, in-process API)', () => {
  let db: Db;
  let api: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    auth = { ...(await mintKey(db, ['finance'], 'finance-desk')), 'x-actor': 'priya' };
    opsKey = await mintKey(db, ['ops'], 'ops-desk');
    api = await buildApi({ config, db });
    base = await api.listen({ port: 0, host: '127.0.0.1' });
  });

  /** Over real HTTP (light-my-request's inject does not load under jest's CommonJS runtime). */
  async function call(opts: { method: string; url: string; headers?: Record<string, string>; payload?: unknown }) {
    const isText = typeof opts.payload === 'string';
    const headers = { ...(opts.payload !== undefined && !isText ? { 'content-type': 'application/json' } : {}), ...opts.headers };
    const res = await fetch(base + opts.url, { method: opts.method, headers, body: opts.payload === undefined ? undefined : isText ? (opts.payload as string) : JSON.stringify(opts.payload) });
    const text = await res.text();
    return { statusCode: res.status, json: () => JSON.parse(text) };
  }
  afterAll(async () => {
    await api?.close();
    await db?.end();
  });

  const upload = (csv: string, contentType = 'text/csv') => call({ method: 'POST', url: '/finance/bank-statements', headers: { ...auth, 'content-type': contentType }, payload: csv });
  const count = async (table: string) => (await db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n as number;

  test('when a bank CSV has bad lines, then it is rejected with every line number and nothing is written', async () => {
    const res = await upload(fixture('bank-malformed.csv'));
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.problems.map((p: { line: number }) => p.line)).toEqual([3, 4, 5]);
    expect(await count('bank_statement_imports')).toBe(0);
    expect(await count('bank_statement_lines')).toBe(0);
  });

  test('when the same file is uploaded twice, then the second upload adds nothing; an overlapping file adds only new credits', async () => {
    const first = await upload(fixture('bank-good.csv'));
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ duplicateFile: false, lineCount: 2, linesAdded: 2 });
    const again = await upload(fixture('bank-good.csv'));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ duplicateFile: true, linesAdded: 0 });
    const overlap = await call({ method: 'POST', url: '/finance/bank-statements', headers: auth, payload: { fileName: 'overlap.csv', csv: fixture('bank-overlap.csv') } });
    expect(overlap.json()).toMatchObject({ duplicateFile: false, lineCount: 2, linesAdded: 1 });
    const { rows } = await db.query(`SELECT utr_normalised, amount_paise FROM bank_statement_lines ORDER BY utr_normalised`);
    expect(rows).toEqual([
      { utr_normalised: 'AXISCNGOOD000001', amount_paise: 97_640 },
      { utr_normalised: 'AXISCNGOOD000002', amount_paise: 150_000 },
      { utr_normalised: 'AXISCNGOOD000003', amount_paise: 2_005 },
    ]);
  });

  test('when the finance key is missing, then 401, and a key without the finance role gets 403; nothing is written', async () => {
    const res = await call({ method: 'POST', url: '/finance/bank-statements', headers: { 'content-type': 'text/csv' }, payload: fixture('bank-overlap.csv') });
    expect(res.statusCode).toBe(401);
    expect(await call({ method: 'GET', url: '/finance/recon/exceptions', headers: opsKey }).then((r) => r.statusCode)).toBe(403);
  });

  test('when finance resolves an exception with a note, then it is audited, listed as resolved, and cannot be resolved twice', async () => {
    const { rows } = await db.query(
      `INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, first_run_id, last_run_id)
       VALUES ('adjustment|adj_T1|setl_T1', 'unmatched', 'adjustment', 'medium', 'review', '2026-09-02', 'adj_T1', 'run-x', 'run-x') RETURNING id`,
    );
    const id = rows[0].id as number;
    const listed = await call({ method: 'GET', url: '/finance/recon/exceptions?status=open&reason=adjustment&from=2026-09-01&to=2026-09-30', headers: auth });
    expect(listed.json().exceptions.map((e: { id: number }) => e.id)).toEqual([id]);

    const noNote = await call({ method: 'POST', url: `/finance/recon/exceptions/${id}/resolve`, headers: auth, payload: {} });
    expect(noNote.statusCode).toBe(400);
    const resolved = await call({ method: 'POST', url: `/finance/recon/exceptions/${id}/resolve`, headers: auth, payload: { note: 'Booked as bank interest, ticket FIN-12' } });
    expect(resolved.statusCode).toBe(200);
    expect(resolved.json()).toMatchObject({ status: 'resolved', resolvedBy: 'key:finance-desk (priya)', resolutionNote: 'Booked as bank interest, ticket FIN-12' });
    const twice = await call({ method: 'POST', url: `/finance/recon/exceptions/${id}/resolve`, headers: auth, payload: { note: 'again' } });
    expect(twice.statusCode).toBe(409);
    const audit = await db.query(`SELECT actor, action, note FROM recon_exception_actions WHERE exception_id = $1`, [id]);
    expect(audit.rows).toEqual([{ actor: 'key:finance-desk (priya)', action: 'resolve', note: 'Booked as bank interest, ticket FIN-12' }]);
    const bad = await call({ method: 'GET', url: '/finance/recon/exceptions?reason=made-up', headers: auth });
    expect(bad.statusCode).toBe(400);
  });

  test('when a run is requested for a backwards window or an impossible date, then 400; without Temporal wired, then 503', async () => {
    const backwards = await call({ method: 'POST', url: '/finance/recon/runs', headers: auth, payload: { from: '2026-09-05', to: '2026-09-01' } });
    expect(backwards.statusCode).toBe(400);
    const impossible = await call({ method: 'POST', url: '/finance/recon/runs', headers: auth, payload: { from: '2026-02-27', to: '2026-02-30' } });
    expect(impossible.statusCode).toBe(400);
    expect(impossible.json()).toMatchObject({ error: { details: [{ path: ['to'], message: 'no such date' }] } });
    const filter = await call({ method: 'GET', url: '/finance/recon/exceptions?from=2026-02-30', headers: auth });
    expect(filter.statusCode).toBe(400);
    const unwired = await call({ method: 'POST', url: '/finance/recon/runs', headers: auth, payload: { from: '2026-09-01', to: '2026-09-03' } });
    expect(unwired.statusCode).toBe(503);
  });
});
