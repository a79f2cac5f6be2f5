/** Which gateway is our sandbox, and what a real secret must be (issue 21, items 1, 2 and 8). Pure:
 * secretChecks.ts and the sandbox's start-up turn these answers into problem lines. No function here
 * returns or echoes a secret's value. */
import { isIP } from 'node:net';

/** Named hosts that are our sandbox (the compose service is `sandbox`), besides loopback
 * (127.0.0.0/8, ::1). RAZORPAY_SANDBOX_HOSTS adds names (e.g. a Kubernetes service); a Razorpay
 * host is never a sandbox, whatever is listed. */
export const SANDBOX_GATEWAY_HOSTS: readonly string[] = ['localhost', 'sandbox'];

export const isRazorpayHost = (host: string): boolean => /(^|\.)razorpay\.com\.?$/i.test(host);

/** `host` as URL.hostname gives it (IPv4 in dotted form, IPv6 compressed and without brackets). */
const isLoopback = (host: string): boolean => (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';

/** The base URL's host is on the allow-list. No URL means the real https://api.razorpay.com. */
export function isSandboxGateway(baseUrl: string | undefined, extraHosts: readonly string[] = []): boolean {
  if (!baseUrl) return false;
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  if (isRazorpayHost(host)) return false;
  return isLoopback(host) || [...SANDBOX_GATEWAY_HOSTS, ...extraHosts].some((h) => h.toLowerCase() === host);
}

export const MIN_WEBHOOK_SECRET_LENGTH = 32;
/** 32 random hex characters (128 bits) estimate at ≈ 116 and, in 300,000 draws, never below 89;
 * 80 refuses no random secret of that length in practice, and every repeated or sequential one. */
export const MIN_WEBHOOK_SECRET_BITS = 80;

/** Shannon entropy (bits per symbol) of the symbols' own frequencies. */
function bitsPerSymbol(symbols: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const s of symbols) counts.set(s, (counts.get(s) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / symbols.length) * Math.log2(n / symbols.length);
  return bits;
}

/** The shortest prefix the string repeats (a secret that is one chunk over and over is worth one chunk). */
function repeatingUnit(s: string): string {
  for (let p = 1; p <= s.length / 2; p++) {
    let repeats = true;
    for (let i = p; i < s.length && repeats; i++) repeats = s[i] === s[i - p];
    if (repeats) return s.slice(0, p);
  }
  return s;
}

/** A simple, explainable estimate of a secret's randomness in bits: the length of its shortest
 * repeating unit times the entropy per character, measured over the unit's characters and over the
 * steps between neighbouring characters (so `abcdef…` or `0246…` count as little as `aaaa…`), the
 * lower of the two. It cannot tell a random string from a long English phrase; it stops the usual
 * `12345678`, `password`, repeated and sequential strings. */
export function estimatedBits(secret: string): number {
  const codes = [...repeatingUnit(secret)].map((c) => c.codePointAt(0)!);
  const steps = codes.slice(1).map((c, i) => c - codes[i]!);
  const ofCharacters = codes.length * bitsPerSymbol(codes);
  const ofSteps = steps.length === 0 ? 0 : steps.length * bitsPerSymbol(steps);
  return Math.min(ofCharacters, ofSteps);
}

/** Why a webhook secret is too weak to sign money (null: strong enough). */
export function webhookSecretWeakness(secret: string): string | null {
  if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) return `shorter than ${MIN_WEBHOOK_SECRET_LENGTH} characters; use e.g. openssl rand -hex 32`;
  const bits = Math.floor(estimatedBits(secret));
  if (bits < MIN_WEBHOOK_SECRET_BITS) return `too little randomness (about ${bits} bits estimated, ${MIN_WEBHOOK_SECRET_BITS} needed: no repeated, sequential or word-like secrets); use e.g. openssl rand -hex 32`;
  return null;
}

/** 32 random bytes hold about 30 distinct values and 30 distinct steps between neighbours; fewer
 * than 16 of either happens about once in 10^14 draws, and for every all-zero, repeated-pattern or
 * counting key. */
export const MIN_BANK_KEY_DISTINCT_BYTES = 16;

/** Why a bank-details key is too weak to seal account numbers (null: strong enough). Its bytes are
 * counted, never echoed. */
export function bankKeyWeakness(key: Buffer): string | null {
  const bytes = [...key];
  const steps = bytes.slice(1).map((b, i) => (b - bytes[i]! + 256) % 256);
  const distinct = Math.min(new Set(bytes).size, new Set(steps).size);
  if (distinct >= MIN_BANK_KEY_DISTINCT_BYTES) return null;
  return `too little randomness (${distinct} distinct byte values or steps, ${MIN_BANK_KEY_DISTINCT_BYTES} needed: no zero, repeated or counting keys); use e.g. openssl rand -base64 32`;
}

/** A named secret; `values` holds more than one for a list (previous webhook secrets). */
export interface SecretSlot { key: string; values: readonly string[] }

/** One line per slot that holds a value an earlier slot already holds ("KEY: the same value as OTHER"). */
export function reusedSecretProblems(slots: readonly SecretSlot[]): string[] {
  const firstHolder = new Map<string, string>();
  const problems: string[] = [];
  for (const { key, values } of slots) {
    const reported = new Set<string>();
    for (const value of values) {
      const holder = firstHolder.get(value);
      if (holder !== undefined && !reported.has(holder)) {
        reported.add(holder);
        problems.push(`  - ${key}: the same value as ${holder}; each secret must be its own`);
      } else if (holder === undefined) {
        firstHolder.set(value, key);
      }
    }
  }
  return problems;
}

/** Passwords every tutorial, image default and this repository publish. */
export const KNOWN_DATABASE_PASSWORDS: readonly string[] = [
  'postgres', 'payouts', 'temporal', 'password', 'passw0rd', 'admin', 'root', 'secret', 'changeme', 'change_me', 'test', 'example',
  '123456', '12345678', 'qwerty', 'letmein', 'pgpass',
];

/** What is wrong with a database password, if anything (compared without case). */
export function databasePasswordWeakness(password: string, user: string): string | null {
  if (password === '') return 'an empty password';
  if (KNOWN_DATABASE_PASSWORDS.includes(password.toLowerCase())) return 'a well-known database password; set a random one (e.g. openssl rand -hex 24)';
  if (user !== '' && password.toLowerCase() === user.toLowerCase()) return 'the password is the user name; set a random one (e.g. openssl rand -hex 24)';
  return null;
}

/** The password in a PostgreSQL URL: undefined when the URL names none (libpq then reads
 * PGPASSWORD or ~/.pgpass), '' when it says `user:@`. */
export function urlPassword(url: string): { user: string; password: string | undefined } {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  if (parsed.password !== '') return { user, password: decodeURIComponent(parsed.password) };
  return { user, password: /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:@/i.test(url) ? '' : undefined };
}

/** A value the sandbox may hold names itself: it contains `sandbox` (the defaults do). The app's
 * real-secret check refuses exactly such values, so no value is accepted by both. */
export const isSandboxValue = (value: string): boolean => /sandbox/i.test(value);
/** A sandbox key id is also a test-mode one (never `rzp_live_`). */
export const isSandboxKeyId = (value: string): boolean => value.startsWith('rzp_test_') && isSandboxValue(value);
