/** What every answer of the API and the console tells a browser (@fastify/helmet): never framed,
 * never MIME-sniffed, only our own scripts (the console's one inline script admitted by its hash),
 * forms posted only to us, a Referer only to ourselves (which keeps the Origin header on our own
 * form posts, which the sign-in check reads), and in production HSTS and upgrade-insecure-requests
 * (development and the tests serve plain HTTP on loopback, where HSTS would stick to 127.0.0.1). */
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config';
import { CONSOLE_INLINE_SCRIPT_HASHES } from '../console/scripts';

export async function securityHeaders(app: FastifyInstance, config: Pick<Config, 'NODE_ENV'>): Promise<void> {
  const production = config.NODE_ENV === 'production';
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        scriptSrc: ["'self'", ...CONSOLE_INLINE_SCRIPT_HASHES],
        scriptSrcAttr: ["'none'"],
        // The console's <style> and a few style attributes, and the indicator style htmx inserts:
        // styles run no script, so inline ones are allowed.
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        ...(production ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
    hsts: production ? { maxAge: 31_536_000, includeSubDomains: true } : false,
  });
}
