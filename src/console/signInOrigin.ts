/** Login CSRF (issue 21): a sign-in form posted from another site would sign the victim's browser
 * into the attacker's key, so what they then do is recorded under it. Browsers send `Origin` on
 * every POST (`null` when the page's Referrer-Policy hides it; ours is same-origin), and
 * `Sec-Fetch-Site`; a sign-in is accepted only from our own origin: PUBLIC_URL when configured, else
 * the host the request was sent to (request.host: the Host header, or a trusted proxy's
 * X-Forwarded-Host). A post with neither Origin nor Referer is no browser's cross-site form (a
 * script, a test client) and is accepted. */
import type { IncomingHttpHeaders } from 'node:http';

const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/** Why the sign-in looks cross-site (the origin it came from), or null when it is our own page's. */
export function crossSiteSignIn(headers: IncomingHttpHeaders, own: { publicOrigin?: string; host: string }): string | null {
  const site = one(headers['sec-fetch-site']);
  if (site && site !== 'same-origin' && site !== 'none') return `a ${site} page`;
  const origin = one(headers.origin);
  const referer = one(headers.referer);
  const claimed = origin ?? (referer === undefined ? undefined : originOf(referer));
  if (claimed === undefined) return null;
  if (claimed === 'null') return 'a page that hides its origin';
  if (own.publicOrigin) return claimed === own.publicOrigin ? null : claimed;
  return originOf(claimed) !== 'null' && new URL(claimed).host === own.host.toLowerCase() ? null : claimed;
}
