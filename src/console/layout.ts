/** The console's page frame: a skip link, the navigation the role may use, who is signed in, and
 * the styles (laptop-first: fits 1366×768 without horizontal scrolling; focus always visible). */
import type { PlainRole } from '../auth/roles';
import { html, raw, type Html } from './html';
import { csrfToken, type ConsoleSession } from './session';

const NAV: Array<{ href: string; label: string; roles: readonly PlainRole[] }> = [
  { href: '/console/recon', label: 'Recon runs', roles: ['finance'] },
  { href: '/console/exceptions', label: 'Exceptions', roles: ['finance'] },
  { href: '/console/bank-statements', label: 'Bank statements', roles: ['finance'] },
  { href: '/console/statements', label: 'Vendor statements', roles: ['finance'] },
  { href: '/console/settlement', label: 'Settlement runs', roles: ['finance'] },
  { href: '/console/payouts', label: 'Payout queue', roles: ['ops'] },
  { href: '/console/batches', label: 'Batches', roles: ['ops'] },
  { href: '/console/webhooks/quarantine', label: 'Webhook quarantine', roles: ['ops'] },
  { href: '/console/vendors/bank-details', label: 'Bank details', roles: ['admin', 'finance'] },
];

export const navFor = (session: ConsoleSession) => NAV.filter((n) => n.roles.some((r) => session.principal.roles.includes(r)));

const STYLE = raw(`
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f6f7f9}
a{color:#0b57d0}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.skip{position:absolute;left:-9999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px 10px;z-index:9}
header{display:flex;flex-wrap:wrap;align-items:center;gap:8px 20px;background:#14213d;color:#fff;padding:8px 20px}
header a{color:#fff;text-decoration:none;padding:6px 8px;border-radius:4px;white-space:nowrap}
header a[aria-current=page]{background:#fca311;color:#14213d}
header .who{margin-left:auto;display:flex;gap:12px;align-items:center;font-size:14px;white-space:nowrap}
header strong{font-weight:600}
main{max-width:1320px;margin:0 auto;padding:16px 20px}
h1{font-size:22px;margin:4px 0 12px}h2{font-size:18px;margin:20px 0 8px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:14px}
th,td{border-bottom:1px solid #e3e6ea;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.num{white-space:nowrap}
form.inline{display:flex;gap:6px;align-items:center;flex-wrap:wrap}
fieldset{border:1px solid #cfd5dc;background:#fff;padding:10px 14px;margin:0 0 12px}
label{font-weight:600;font-size:13px;display:block}
.field{display:inline-block;margin:0 10px 8px 0;vertical-align:bottom}
input,select,textarea,button{font:inherit}
input,select,textarea{padding:5px 7px;border:1px solid #8a94a3;border-radius:4px;background:#fff}
button,.button{padding:6px 12px;border:1px solid #14213d;border-radius:4px;background:#14213d;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:#14213d}
button.danger{background:#b42318;border-color:#b42318}
.notice{padding:8px 12px;border-left:4px solid #0b57d0;background:#e8f0fe;margin:0 0 12px}
.error{padding:8px 12px;border-left:4px solid #b42318;background:#fdecea;margin:0 0 12px}
.paused{color:#b42318;font-weight:700}.running{color:#067647;font-weight:700}
code,.ref{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;overflow-wrap:anywhere}
tr[data-exception-id] td:nth-child(2){white-space:nowrap}
pre{white-space:pre-wrap;word-break:break-all;max-height:220px;overflow:auto;background:#f1f3f5;padding:6px;margin:4px 0;font-size:12px}
progress{width:420px;height:18px}
.muted{color:#5b6573}
.nowrap{white-space:nowrap}
`);

export function page(opts: { title: string; session: ConsoleSession | null; current?: string; body: Html }): string {
  const { session } = opts;
  const nav = session ? navFor(session) : [];
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Payouts console</title><style>${STYLE}</style><script src="/console/assets/htmx.min.js" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><strong>Payouts console</strong>
${nav.length ? html`<nav aria-label="Console">${nav.map((n) => html`<a href="${n.href}"${opts.current === n.href ? raw(' aria-current="page"') : ''}>${n.label}</a> `)}</nav>` : ''}
${session ? html`<div class="who"><span>Signed in as <strong data-testid="principal">key:${session.principal.name}</strong>${session.person ? html` (${session.person})` : ''} · ${session.principal.roles.join(', ')}</span>
<form method="post" action="/console/sign-out">${csrfField(session)}<button class="secondary" type="submit">Sign out</button></form></div>` : ''}
</header><main id="main" tabindex="-1"><h1>${opts.title}</h1>${opts.body}</main></body></html>`.text}`;
}

export const csrfField = (session: ConsoleSession): Html => html`<input type="hidden" name="_csrf" value="${csrfToken(session)}">`;
