/** TRUST_PROXY (issue 21, item 3): which proxies' X-Forwarded-* the API believes, as Fastify's
 * `trustProxy` takes them; anything else stops start-up. */
import { loadConfig, trustProxySchema } from '../../src/config/config';

describe('TRUST_PROXY', () => {
  test('when unset or off, then no proxy is trusted', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(trustProxySchema.parse('off')).toBe(false);
  });

  test('when a hop count or addresses, CIDRs and proxy-addr names are given, then they are kept as Fastify takes them', () => {
    expect(trustProxySchema.parse('2')).toBe(2);
    expect(trustProxySchema.parse('10.0.0.0/8, 192.168.1.7,::1,fd00::/8,loopback')).toEqual(['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8', 'loopback']);
  });

  test.each(['0', 'yes', '10.0.0.0/33', '300.1.1.1', 'proxy.internal', '10.0.0.0/8/1'])('when it is %s, then the configuration is refused', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
  });
});
