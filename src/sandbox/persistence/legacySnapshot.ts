/** The state file before the journal (version 1): one JSON object rewritten whole at every save, its
 * Maps and Sets written as `{ __map: [...] }` and `{ __set: [...] }`. Read once, as records, and
 * rewritten as a journal. */
import { KEYED, LISTS, LISTS_BY_KEY, MEMBERS, names, type KeyedName } from './collections';
import type { JournalRecord } from './records';

interface LegacySnapshot {
  version: 1;
  clockOffsetMs: number;
  state: Record<string, unknown>;
  book: Record<string, unknown>;
  idempotency: unknown;
  refundIdempotency: unknown;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object') {
    if ('__map' in value) return new Map((value as { __map: Array<[unknown, unknown]> }).__map);
    if ('__set' in value) return new Set((value as { __set: unknown[] }).__set);
  }
  return value;
}

/** A version 1 file starts as an object with its version first; a journal starts with its header. */
export const looksLegacy = (text: string): boolean => text.startsWith('{"version":');

export function legacyRecords(text: string): JournalRecord[] {
  const snapshot = JSON.parse(text, reviver) as LegacySnapshot;
  if (snapshot.version !== 1) throw new Error(`version ${String(snapshot.version)}`);
  const { state, book } = snapshot;
  const entries = (name: KeyedName): Iterable<[string, unknown]> => {
    if (name === 'idempotency' || name === 'refundIdempotency') return Array.isArray(snapshot[name]) ? (snapshot[name] as Array<[string, unknown]>) : [];
    return (state[name] as Map<string, unknown> | undefined) ?? [];
  };
  const partOf = (name: string): Record<string, unknown> => (name in state ? state : book);
  const records: JournalRecord[] = [
    { op: 'set', in: 'platformBalance', value: state.platformBalance as number },
    { op: 'set', in: 'clockOffsetMs', value: snapshot.clockOffsetMs },
  ];
  for (const name of names(KEYED)) for (const [key, value] of entries(name)) records.push({ op: 'put', in: name, key, value });
  for (const name of names(MEMBERS)) for (const key of (partOf(name)[name] as Set<string> | undefined) ?? []) records.push({ op: 'add', in: name, key });
  for (const name of names(LISTS)) for (const value of (partOf(name)[name] as unknown[] | undefined) ?? []) records.push({ op: 'append', in: name, value });
  for (const name of names(LISTS_BY_KEY)) {
    for (const [key, list] of (book[name] as Map<string, unknown[]> | undefined) ?? []) for (const value of list) records.push({ op: 'append', in: name, key, value });
  }
  return records;
}
