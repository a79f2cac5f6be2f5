/** Instants as India Standard Time, the zone ops, finance and vendors work in (UTC+05:30, no
 * daylight saving). Stored instants stay UTC; these are for what a person reads (the console, the
 * CLI) and for the CSVs finance opens (ISO with the offset, so a machine reads them too). Pure. */
import { IST_OFFSET_MS } from './calendar';

const shifted = (instant: Date | string): Date | null => {
  const ms = typeof instant === 'string' ? Date.parse(instant) : instant.getTime();
  return Number.isNaN(ms) ? null : new Date(ms + IST_OFFSET_MS);
};

/** `2026-12-07 10:05:33 IST`; `—` for no instant. */
export function formatIst(instant: Date | string | null | undefined, opts: { seconds?: boolean } = {}): string {
  if (instant === null || instant === undefined) return '—';
  const d = shifted(instant);
  if (!d) return String(instant);
  return `${d.toISOString().slice(0, opts.seconds === false ? 16 : 19).replace('T', ' ')} IST`;
}

/** `2026-12-07T10:05:33+05:30`: ISO 8601 with IST's offset (milliseconds dropped). */
export function isoIst(instant: Date | string | null | undefined): string | null {
  if (instant === null || instant === undefined) return null;
  const d = shifted(instant);
  return d ? `${d.toISOString().slice(0, 19)}+05:30` : String(instant);
}
