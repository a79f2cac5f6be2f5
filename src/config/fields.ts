/** The field types config's knobs are written in, and the knobs whose parsing is more than a type. */
import { isIP } from 'node:net';
import { z } from 'zod';

export const port = z.coerce.number().int().min(0).max(65535);
export const duration = z.coerce.number().int().min(1); // milliseconds
export const onOff = z.enum(['on', 'off']);
export const commaList = z.string().default('').transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean));

/** `host:port` (IPv6 in brackets) the SDK's Prometheus exporter binds, or `off` (the default: two
 * workers on one host would otherwise fight over one port). The worker's /metrics appends what
 * the exporter serves, so a loopback address is enough for one scrape target per worker. */
export const sdkMetricsAddressSchema = z
  .string()
  .trim()
  .transform((v) => v || 'off')
  .pipe(z.union([
    z.literal('off').transform(() => null),
    z.string().refine((v) => {
      const port = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v)?.[1];
      return port !== undefined && Number(port) <= 65_535;
    }, 'expected host:port (e.g. 127.0.0.1:9464) or off'),
  ]));

/** `off` (the default: X-Forwarded-* are ignored, the peer is the client), a hop count, or
 * comma-separated proxy addresses or CIDRs (or proxy-addr's names loopback, linklocal,
 * uniquelocal), as Fastify's `trustProxy` takes them. */
export const trustProxySchema = z.string().trim().transform((v, ctx): false | number | string[] => {
  if (v === '' || v === 'off') return false;
  if (/^\d+$/.test(v) && Number(v) >= 1) return Number(v);
  const entries = v.split(',').map((e) => e.trim()).filter(Boolean);
  const bad = entries.filter((e) => !['loopback', 'linklocal', 'uniquelocal'].includes(e) && !isIpOrCidr(e));
  if (bad.length > 0 || entries.length === 0) {
    ctx.addIssue({ code: 'custom', message: `expected off, a hop count or proxy addresses/CIDRs; not ${bad.join(', ') || v}` });
    return z.NEVER;
  }
  return entries;
});

function isIpOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}
