/** A production API that receives X-Forwarded-For while TRUST_PROXY is unset (issue 41): each such
 * request is counted, and an error is logged once per interval, not once per request. */
import Fastify, { type FastifyInstance } from 'fastify';
import { watchUntrustedProxy, type UntrustedProxyWatch } from '../../src/api/untrustedProxy';
import type { Config } from '../../src/config/config';

describe('X-Forwarded-For without TRUST_PROXY', () => {
  let app: FastifyInstance;
  let watch: UntrustedProxyWatch;
  let now: number;
  let baseUrl: string;
  const error = jest.fn();

  const start = async (config: Pick<Config, 'NODE_ENV' | 'TRUST_PROXY'>) => {
    now = 0;
    error.mockClear();
    app = Fastify();
    watch = watchUntrustedProxy(app, config, { log: { error } as never, intervalMs: 60_000, now: () => now });
    app.get('/health', async () => ({ status: 'ok' }));
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  };
  afterEach(async () => { await app?.close(); });

  const counted = async () => (await watch.forwarded.get()).values[0]?.value ?? NaN;
  // Over a socket (app.inject's light-my-request loads an ES module jest does not compile here).
  const request = async (headers: Record<string, string> = { 'x-forwarded-for': '203.0.113.7' }) => ({ statusCode: (await fetch(`${baseUrl}/health`, { headers })).status });

  test('when a production API behind an untrusted proxy gets forwarded requests, then each is counted and one error is logged per interval', async () => {
    await start({ NODE_ENV: 'production', TRUST_PROXY: false });
    expect(await counted()).toBe(0);
    for (let n = 0; n < 5; n++) expect((await request()).statusCode).toBe(200);
    expect(await counted()).toBe(5);
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0]![1]).toMatch(/X-Forwarded-For arrived but TRUST_PROXY is unset/);
    now += 59_999;
    await request();
    expect(error).toHaveBeenCalledTimes(1);
    now += 1;
    await request();
    expect(error).toHaveBeenCalledTimes(2);
    expect(await counted()).toBe(7);
  });

  test('when a request carries no X-Forwarded-For, then nothing is counted or logged', async () => {
    await start({ NODE_ENV: 'production', TRUST_PROXY: false });
    await request({});
    expect([await counted(), error.mock.calls.length]).toEqual([0, 0]);
  });

  const trusted: Array<[string, Pick<Config, 'NODE_ENV' | 'TRUST_PROXY'>]> = [
    ['TRUST_PROXY is set', { NODE_ENV: 'production', TRUST_PROXY: ['10.0.0.0/8'] }],
    ['not in production', { NODE_ENV: 'development', TRUST_PROXY: false }],
  ];
  test.each(trusted)('when %s, then forwarded requests are neither counted nor logged', async (_what, config) => {
    await start(config);
    await request();
    expect([await counted(), error.mock.calls.length]).toEqual([0, 0]);
  });
});
