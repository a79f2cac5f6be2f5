/** Keyset cursors `<UTC timestamp>|<uuid>`: the `next` a listing hands out (PostgreSQL's
 * `to_char(… 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || id`), read back from a caller. Parsed fully
 * here: a timestamp PostgreSQL refuses (month 13, hour 99, year 0) would otherwise fail the query
 * and answer 500 instead of 400. */
import { z } from 'zod';
import { isIsoDate } from '../domain/calendar';

const CURSOR = /^((\d{4})-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?Z\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export interface KeysetCursor {
  /** The timestamp as given (microseconds kept: a JS Date would drop them and repeat rows). */
  at: string;
  id: string;
}

/** The cursor, or null when any part of it is not a real instant or a uuid. */
export function parseKeysetCursor(text: string): KeysetCursor | null {
  const match = CURSOR.exec(text);
  if (!match) return null;
  const [, date, year, hour, minute, second, id] = match as unknown as [string, string, string, string, string, string, string];
  // PostgreSQL has no year 0; JavaScript's Date does.
  if (Number(year) < 1 || !isIsoDate(date)) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  return { at: text.slice(0, text.indexOf('|')), id };
}

export const keysetCursorSchema = z.string().max(100).transform((text, ctx): KeysetCursor => {
  const cursor = parseKeysetCursor(text);
  if (!cursor) {
    ctx.addIssue({ code: 'custom', message: 'not a cursor this API handed out: pass the `next` of the previous page unchanged' });
    return z.NEVER;
  }
  return cursor;
});
