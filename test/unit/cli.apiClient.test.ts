/** The payouts CLI's API client: what it sends, answers checked by shape, and every failure as one
 * line a person can act on. Plus how the CLI lays out rows for a terminal and for a pipe. */
import { ApiError, ApiUnreachable, createApiClient, UnexpectedAnswer } from '../../src/cli/payouts/apiClient';
import { formatAge, renderTable } from '../../src/cli/payouts/output';

type Seen = { url: string; init: RequestInit };

function fakeFetch(status: number, body: string, seen: Seen[] = []): typeof fetch {
  return (async (url: URL | string, init?: RequestInit) => {
    seen.push({ url: String(url), init: init ?? {} });
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

const switchState = { paused: true, reason: 'bank incident', changedBy: 'key:ops (Asha)', changedAt: '2026-09-02T10:00:00.000Z' };

describe('payouts CLI: the API client', () => {
  test('when a command calls the API, then it sends the key, the person and the filters, and returns the checked answer', async () => {
    const seen: Seen[] = [];
    const api = createApiClient({ apiUrl: 'http://api.test', key: 'pk_ops', actor: 'asha', fetch: fakeFetch(200, JSON.stringify({ items: [], next: null }), seen) });
    await expect(api.queuePage({ status: 'parked', vendorId: undefined, olderThan: '1h', limit: 200 })).resolves.toEqual({ items: [], next: null });
    expect(seen[0]!.url).toBe('http://api.test/ops/payouts?status=parked&olderThan=1h&limit=200');
    expect(seen[0]!.init.headers).toMatchObject({ authorization: 'Bearer pk_ops', 'x-actor': 'asha' });

    const paused = { ...switchState, inFlight: { count: 0, payouts: [] } };
    const post = createApiClient({ apiUrl: 'http://api.test', key: 'pk_ops', fetch: fakeFetch(200, JSON.stringify({ ...paused, extra: 1 }), seen) });
    // Unknown fields are kept: --json prints what the API said.
    await expect(post.pauseTransfers('bank incident')).resolves.toEqual({ ...paused, extra: 1 });
    expect(seen[1]!.init).toMatchObject({ method: 'POST', body: JSON.stringify({ reason: 'bank incident' }), headers: { 'content-type': 'application/json' } });
  });

  test('when the API answers with its error envelope, then the error is one line with the status, code, message and the first issues', async () => {
    const envelope = { error: { code: 'invalid_request', message: 'request failed validation', details: [{ path: ['reason'], message: 'Too small' }, { path: [], message: 'bad' }] } };
    const api = createApiClient({ apiUrl: 'http://api.test', key: 'k', fetch: fakeFetch(400, JSON.stringify(envelope)) });
    const err = await api.pauseTransfers('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).oneLine()).toBe('400 invalid_request: request failed validation (reason: Too small; bad)');
    expect((err as ApiError).oneLine()).not.toContain('\n');
  });

  test('when something else answers (a proxy page), or the answer has another shape, then it says so without a stack trace', async () => {
    const proxy = createApiClient({ apiUrl: 'http://api.test', key: 'k', fetch: fakeFetch(502, '<html>\n<b>Bad gateway</b></html>') });
    const err = await proxy.transferSwitch().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: 'http_error' });
    expect((err as ApiError).oneLine()).toBe('502 http_error: GET /ops/transfers/switch answered HTTP 502 without the API\'s error envelope: <html> <b>Bad gateway</b></html>');

    const other = createApiClient({ apiUrl: 'http://api.test', key: 'k', fetch: fakeFetch(200, JSON.stringify({ paused: 'yes' })) });
    await expect(other.transferSwitch()).rejects.toThrow(new UnexpectedAnswer('unexpected answer to GET /ops/transfers/switch from http://api.test: paused: Invalid input: expected boolean, received string'));
  });

  test('when the API cannot be reached, then the message names it and the hint says where the URL came from', async () => {
    const refused = (async () => { throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }); }) as unknown as typeof fetch;
    const api = createApiClient({ apiUrl: 'http://127.0.0.1:3000', key: 'k', unreachableHint: 'the URL is from .data/stack.json: is npm run dev running?', fetch: refused });
    await expect(api.transferSwitch()).rejects.toThrow(new ApiUnreachable('cannot reach the API at http://127.0.0.1:3000 (ECONNREFUSED); the URL is from .data/stack.json: is npm run dev running?'));
  });
});

describe('payouts CLI: rows for a person and for a pipe', () => {
  test('when the output is a terminal, then columns are aligned; otherwise a header and tab-separated lines', () => {
    const rows = [['ord_1', '₹81.00', 'suspended'], ['ord_22', '₹1,00,000.00', null]];
    expect(renderTable(['ORDER', 'AMOUNT', 'REASON'], rows, { tty: true })).toEqual([
      'ORDER   AMOUNT        REASON',
      'ord_1   ₹81.00        suspended',
      'ord_22  ₹1,00,000.00',
    ]);
    expect(renderTable(['ORDER', 'AMOUNT', 'REASON'], [['ord_1', 'a\tb', 'two\nlines']], { tty: false })).toEqual(['ORDER\tAMOUNT\tREASON', 'ord_1\ta b\ttwo lines']);
  });

  test('when an age is shown, then it reads in the largest sensible units', () => {
    expect([formatAge(42), formatAge(600), formatAge(7_380), formatAge(2 * 86_400 + 4 * 3_600)]).toEqual(['42s', '10m', '2h 03m', '2d 4h']);
  });
});
