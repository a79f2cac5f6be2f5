/** The OpenAPI document comes from the routes themselves: it validates as OpenAPI 3.1, lists every
 * registered route with its role (or why it is public) and its zod-derived request schemas, and
 * the Swagger UI serves it at /docs. */
import { spawnSync } from 'node:child_process';
import { declaredRoutes } from '../../src/auth/routeAuth';
import { startMoneyInHarness, type MoneyInHarness } from './moneyinHarness';

describe('OpenAPI', () => {
  let h: MoneyInHarness;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is checked field by field
  let doc: any;
  beforeAll(async () => {
    h = await startMoneyInHarness();
    doc = await (await fetch(`${h.baseUrl}/openapi.json`)).json();
  });
  afterAll(async () => { await h?.close(); });

  test('when the document is fetched anonymously, then it validates as OpenAPI 3', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // The validator is an ES module, which jest's CommonJS runtime cannot load: validate in node itself.
    const script = "import SP from '@apidevtools/swagger-parser'; let t=''; for await (const c of process.stdin) t+=c; try { await SP.validate(JSON.parse(t)); console.log('valid'); } catch (e) { console.log('invalid: ' + e.message); process.exit(1); }";
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(doc), encoding: 'utf8', cwd: process.cwd() });
    expect(run.stdout.trim()).toBe('valid');
  });

  test('when every registered route is looked up, then it is documented with its auth requirement', () => {
    const routes = declaredRoutes(h.app).filter((r) => !r.url.startsWith('/docs'));
    expect(routes.length).toBeGreaterThan(25);
    for (const r of routes) {
      const op = doc.paths[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
      expect([r.method, r.url, op ? 'documented' : 'missing']).toEqual([r.method, r.url, 'documented']);
      expect([r.url, op.summary]).not.toEqual([r.url, 'undocumented']);
      if ('public' in r.auth) {
        expect([r.url, op.security, op['x-public']]).toEqual([r.url, [], r.auth.public]);
      } else {
        expect([r.url, op.security, op['x-roles'], Object.keys(op.responses)]).toEqual([r.url, [{ apiKey: [] }], r.auth.roles, expect.arrayContaining(['401', '403'])]);
      }
    }
  });

  test('when a route takes a body or a query, then its schema is the zod schema the handler parses', () => {
    const order = doc.paths['/v1/orders'].post.requestBody.content['application/json'].schema;
    expect(order.required).toEqual(expect.arrayContaining(['clientReference', 'employerId', 'vendorId', 'totalPaise', 'paymentMethod']));
    expect(order.properties.paymentMethod.enum).toEqual(['online', 'wallet', 'cash']);
    expect(order.additionalProperties).toBe(false);
    const queue = doc.paths['/ops/payouts'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(queue).toEqual(expect.arrayContaining(['query:status', 'query:vendorId', 'query:reason', 'query:olderThan']));
    expect(doc.paths['/v1/orders/{orderId}/cash-confirmation'].post['x-roles']).toEqual(['vendor', 'ops']);
    const statement = doc.paths['/v1/vendors/{vendorId}/statement'].get;
    expect([statement['x-roles'], statement.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)]).toEqual([['vendor', 'finance'], ['path:vendorId', 'query:from', 'query:to', 'query:format']]);
  });

  test('when a person opens /docs, then the Swagger UI answers', async () => {
    const res = await fetch(`${h.baseUrl}/docs/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('swagger');
  });
});
