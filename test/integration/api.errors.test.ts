/** Every failure leaves the API in the app's one envelope with the app's codes: Fastify's own
 * errors (bad JSON, media type, URLs it cannot route) are mapped, never passed through. */
import { startMoneyInHarness, type MoneyInHarness } from './moneyinHarness';

describe('API error envelope', () => {
  let h: MoneyInHarness;
  beforeAll(async () => { h = await startMoneyInHarness(); });
  afterAll(async () => { await h?.close(); });

  const raw = async (method: string, path: string, body?: string, contentType?: string) => {
    const res = await fetch(`${h.baseUrl}${path}`, { method, body, headers: { ...h.keys.ordering, ...(contentType ? { 'content-type': contentType } : {}) } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test.each([
    ['a body that is not JSON', 'POST', '/v1/orders', '{"clientReference": ', 'application/json', 400, 'malformed_json'],
    ['a media type no route takes', 'POST', '/v1/orders', 'a=1', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
    ['a path parameter longer than any id', 'GET', `/v1/orders/${'x'.repeat(300)}`, undefined, undefined, 414, 'url_too_long'],
    ['a URL that is not valid', 'GET', '/v1/orders/%E0%A4%A', undefined, undefined, 400, 'bad_url'],
    ['a route that does not exist', 'GET', '/v1/nothing-here?x=1', undefined, undefined, 404, 'not_found'],
  ])('when a request has %s, then it answers %s %i %s in the app envelope', async (_what, method, path, body, type, status, code) => {
    const answer = await raw(method, path, body, type);
    expect(answer.status).toBe(status);
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(answer.body.error).toMatchObject({ code, message: expect.any(String) });
    expect(JSON.stringify(answer.body)).not.toMatch(/FST_|statusCode/);
  });
});
